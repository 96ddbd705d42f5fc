// libfabric is opened on first use (libfabric_loader.cpp has why).
#pragma once

namespace oscf {

// Loads libfabric if it is not yet: nullptr once it is, else why it cannot be
// (the library or one of the functions the engine calls is missing).
const char *libfabric_load_error();

}  // namespace oscf
