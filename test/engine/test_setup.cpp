#include <catch2/catch.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "osc_fabric/engine.h"

namespace {
// libfabric 1.17's shm region of endpoint E in domain D of process P: /dev/shm/P:D:E.
std::string shm_region_path(int domain, int endpoint) {
    return "/dev/shm/" + std::to_string(getpid()) + ":" + std::to_string(domain) + ":" +
           std::to_string(endpoint);
}
constexpr off_t kPlantedSize = 65536;  // shm's own regions are megabytes

// Names of this process's regions now in /dev/shm.
std::set<std::string> own_regions() {
    std::set<std::string> names;
    const std::string prefix = std::to_string(getpid()) + ":";
    if (DIR *dir = opendir("/dev/shm")) {
        while (dirent *e = readdir(dir))
            if (std::string(e->d_name).rfind(prefix, 0) == 0) names.insert(e->d_name);
        closedir(dir);
    }
    return names;
}
}  // namespace

// A node where a process was killed keeps its shm region; a later process that gets the
// same pid finds it in the way. The CI run that found this failed MPI_Win_allocate with
// "fi_enable failed: Device or resource busy".
TEST_CASE("an shm region left by a killed process with our pid does not stop the engine", "[setup]") {
    // Where this process's next endpoint goes: shm numbers domains and endpoints per
    // process, so after one engine's D:E comes a higher D or E.
    oscf_engine *eng = nullptr;
    oscf_engine_config cfg{"shm", 1, 0, OSCF_ACC_AUTO, 0, 0};
    const std::set<std::string> before = own_regions();
    REQUIRE(oscf_engine_open(&cfg, &eng) == OSCF_OK);
    std::set<std::string> opened = own_regions();
    REQUIRE(oscf_engine_close(eng) == OSCF_OK);
    for (const std::string &n : before) opened.erase(n);
    REQUIRE(opened.size() == 1);
    int pid = 0, d0 = 0, e0 = 0;
    REQUIRE(std::sscanf(opened.begin()->c_str(), "%d:%d:%d", &pid, &d0, &e0) == 3);

    // Stand-ins for dead regions (all zeros: not even shm's version), at every name the
    // next endpoint may take.
    std::vector<std::string> planted;
    for (int d = d0; d < d0 + 8; ++d)
        for (int e = 0; e < e0 + 8; ++e) {
            std::string path = shm_region_path(d, e);
            int fd = open(path.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
            if (fd < 0) continue;  // a live region of this process: not ours to touch
            REQUIRE(ftruncate(fd, kPlantedSize) == 0);
            close(fd);
            planted.push_back(path);
        }
    REQUIRE(!planted.empty());

    eng = nullptr;
    const int rc = oscf_engine_open(&cfg, &eng);

    // The engine's endpoint replaced one of them; the rest are removed here.
    int replaced = 0;
    for (const std::string &path : planted) {
        struct stat st {};
        if (stat(path.c_str(), &st) != 0 || st.st_size != kPlantedSize)
            ++replaced;
        else
            unlink(path.c_str());
    }
    REQUIRE(rc == OSCF_OK);
    CHECK(replaced == 1);
    REQUIRE(oscf_engine_close(eng) == OSCF_OK);
}
