// The engine lock (progress.h) in both of its modes: a real lock when several threads
// may enter the engine, and a flag that only catches re-entry when one thread does.
#include "catch_compat.h"

#include <mutex>
#include <thread>

#include "../../osc_fabric/engine/progress.h"

using namespace oscf;

TEST_CASE("with one thread, the engine lock still refuses re-entry from inside", "[engine_lock]") {
    EngineLock mu;
    mu.set_single_thread(true);
    {
        std::unique_lock<EngineLock> lk(mu);
        // opal_progress calling poll() from inside an engine call finds it entered.
        std::unique_lock<EngineLock> inner(mu, std::try_to_lock);
        CHECK_FALSE(inner.owns_lock());
    }
    std::unique_lock<EngineLock> again(mu, std::try_to_lock);
    CHECK(again.owns_lock());
}

TEST_CASE("with threads, the engine lock makes their updates exclusive", "[engine_lock]") {
    EngineLock mu;  // the default: several threads may enter
    long counter = 0;
    constexpr long kEach = 200000;
    auto work = [&] {
        for (long i = 0; i < kEach; ++i) {
            std::lock_guard<EngineLock> lk(mu);
            counter = counter + 1;
        }
    };
    std::thread a(work), b(work);
    a.join();
    b.join();
    CHECK(counter == 2 * kEach);
    std::unique_lock<EngineLock> lk(mu);
    std::unique_lock<EngineLock> inner(mu, std::try_to_lock);
    CHECK_FALSE(inner.owns_lock());
}
