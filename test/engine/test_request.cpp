// A request-based operation's completion (request.h) without a fabric: parts are
// completed by hand, as the CQ would.
#include "catch_compat.h"

#include "../../osc_fabric/engine/request.h"

using namespace oscf;

namespace {
struct Callback {
    int calls = 0, status = -1;
    oscf_notify notify() {
        return oscf_notify{[](void *arg, int st) {
                               auto *c = static_cast<Callback *>(arg);
                               ++c->calls;
                               c->status = st;
                           },
                           this};
    }
};
}  // namespace

TEST_CASE("a request calls back once, when armed and its last part completes", "[request]") {
    AbortList aborts;
    OpCounter target;
    Callback cb;
    const oscf_notify n = cb.notify();
    OpScope scope(aborts, target, &n);
    Completion *part = scope.context();
    scope.on_post();
    scope.on_post();
    part->complete(OSCF_OK, 0);
    CHECK(scope.finish(OSCF_OK, [](auto) { FAIL("a posted operation does not wait"); }) == OSCF_OK);
    CHECK(cb.calls == 0);
    part->complete(OSCF_ERR_INTERNAL, 0);
    CHECK(cb.calls == 1);
    CHECK(cb.status == OSCF_ERR_INTERNAL);
    // The target's counter saw both parts, so a flush covers them.
    CHECK(target.posted == 2);
    CHECK(target.idle());
    CHECK(target.take_error() == OSCF_ERR_INTERNAL);
}

TEST_CASE("a request whose posting failed never calls back", "[request]") {
    AbortList aborts;
    OpCounter target;
    Callback cb;
    const oscf_notify n = cb.notify();

    SECTION("its parts complete while finish waits") {
        OpScope scope(aborts, target, &n);
        Completion *part = scope.context();
        scope.on_post();
        int waited = 0;
        CHECK(scope.finish(OSCF_ERR_INTERNAL, [&](auto idle) {
            ++waited;
            CHECK_FALSE(idle());
            part->complete(OSCF_OK, 0);
            CHECK(idle());
        }) == OSCF_ERR_INTERNAL);
        CHECK(waited == 1);
    }
    SECTION("the wait fails with a part still in flight, which completes later") {
        OpScope scope(aborts, target, &n);
        Completion *part = scope.context();
        scope.on_post();
        scope.on_post();
        CHECK(scope.finish(OSCF_ERR_INTERNAL, [](auto) {}) == OSCF_ERR_INTERNAL);
        // The counter must still be alive for these (ASan and valgrind would see a
        // freed one), and it goes with the last.
        part->complete(OSCF_OK, 0);
        part->complete(OSCF_ERR_INTERNAL, 0);
        CHECK(target.idle());
    }
    CHECK(cb.calls == 0);
}

TEST_CASE("an operation without a request counts on the target's counter", "[request]") {
    AbortList aborts;
    OpCounter target;
    OpScope scope(aborts, target, nullptr);
    CHECK_FALSE(scope.has_request());
    CHECK(scope.context() == &target);
    scope.on_post();
    CHECK(target.in_flight() == 1);
    CHECK(scope.finish(OSCF_ERR_INTERNAL, [](auto) { FAIL("nothing to wait for"); }) == OSCF_ERR_INTERNAL);
    target.complete(OSCF_OK, 0);
    CHECK(target.idle());
}

TEST_CASE("a failed engine ends its requests", "[request]") {
    AbortList aborts;
    OpCounter target;
    Callback cb;
    const oscf_notify n = cb.notify();

    SECTION("an armed one calls back with the failure at once, and goes with its last part") {
        OpScope scope(aborts, target, &n);
        Completion *part = scope.context();
        scope.on_post();
        scope.on_post();
        part->complete(OSCF_OK, 0);
        CHECK(scope.finish(OSCF_OK, [](auto) { FAIL("a posted operation does not wait"); }) == OSCF_OK);
        CHECK(cb.calls == 0);
        aborts.abort_all(OSCF_ERR_FABRIC);
        CHECK(cb.calls == 1);
        CHECK(cb.status == OSCF_ERR_FABRIC);
        CHECK(aborts.empty());
        // The part still out completes after all (ASan and valgrind would see a freed
        // counter here, or a leaked one without it): no second call.
        part->complete(OSCF_OK, 0);
        CHECK(cb.calls == 1);
        CHECK(target.idle());
    }
    SECTION("one still being posted calls back when armed") {
        OpScope scope(aborts, target, &n);
        Completion *part = scope.context();
        scope.on_post();
        aborts.abort_all(OSCF_ERR_FABRIC);
        CHECK(cb.calls == 0);
        CHECK(scope.finish(OSCF_OK, [](auto) { FAIL("a posted operation does not wait"); }) == OSCF_OK);
        CHECK(cb.calls == 1);
        CHECK(cb.status == OSCF_ERR_FABRIC);
        part->complete(OSCF_OK, 0);
        CHECK(cb.calls == 1);
    }
    SECTION("one whose posting failed never calls back") {
        OpScope scope(aborts, target, &n);
        scope.on_post();
        scope.context()->complete(OSCF_OK, 0);
        aborts.abort_all(OSCF_ERR_FABRIC);
        CHECK(scope.finish(OSCF_ERR_FABRIC, [](auto idle) { CHECK(idle()); }) == OSCF_ERR_FABRIC);
        CHECK(cb.calls == 0);  // the call returned the error itself
    }
    SECTION("two at once") {
        Callback other;
        const oscf_notify n2 = other.notify();
        OpScope a(aborts, target, &n), b(aborts, target, &n2);
        a.on_post();
        b.on_post();
        Completion *pa = a.context(), *pb = b.context();
        CHECK(a.finish(OSCF_OK, [](auto) {}) == OSCF_OK);
        CHECK(b.finish(OSCF_OK, [](auto) {}) == OSCF_OK);
        aborts.abort_all(OSCF_ERR_FABRIC);
        CHECK(cb.calls == 1);
        CHECK(other.calls == 1);
        CHECK(other.status == OSCF_ERR_FABRIC);
        pa->complete(OSCF_OK, 0);
        pb->complete(OSCF_OK, 0);
    }
    CHECK(aborts.empty());
}
