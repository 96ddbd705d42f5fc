// RAII for libfabric objects. Every fid is wrapped on the line after it is created;
// owners declare members parent first (fabric, domain, av, cq, ep, MRs) so members are
// destroyed children first. A destructor cannot return an error, so a failing
// fi_close is logged with its fi_strerror text.
#pragma once

#include <rdma/fabric.h>

#include <memory>

#include "status.h"

namespace oscf {

struct fid_closer {
    template <class Fid>
    void operator()(Fid *f) const noexcept {
        if (!f) return;
        int rc = fi_close(&f->fid);
        if (rc) fabric_error("fi_close", rc);
    }
};
template <class Fid>
using fid_ptr = std::unique_ptr<Fid, fid_closer>;

struct info_deleter {
    void operator()(fi_info *i) const noexcept { fi_freeinfo(i); }
};
using info_ptr = std::unique_ptr<fi_info, info_deleter>;

}  // namespace oscf
