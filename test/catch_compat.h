// Catch2 2.x (Debian 12) is one header; 3.x (Debian 13) is a library whose main comes from
// catch2-with-main (meson.build), and ignores CATCH_CONFIG_MAIN. The tests use only what
// both have.
#pragma once
#if __has_include(<catch2/catch_all.hpp>)
#include <catch2/catch_all.hpp>
#else
#include <catch2/catch.hpp>
#endif
