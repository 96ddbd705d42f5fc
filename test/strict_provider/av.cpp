// Address vector wrapper: a pure pass-through; fi_addr_t values are the inner provider's.
#include "strict.h"

namespace strict {

static int av_close(fid *f) {
    auto *a = owner<Av>(f);
    a->inner.reset();
    a->domain->children--;
    delete a;
    return 0;
}

static int av_insert(fid_av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
                     void *context) {
    return fi_av_insert(owner<Av>(av)->inner.get(), addr, count, fi_addr, flags, context);
}
static int av_remove(fid_av *av, fi_addr_t *fi_addr, size_t count, uint64_t flags) {
    return fi_av_remove(owner<Av>(av)->inner.get(), fi_addr, count, flags);
}
static int av_lookup(fid_av *av, fi_addr_t fi_addr, void *addr, size_t *addrlen) {
    return fi_av_lookup(owner<Av>(av)->inner.get(), fi_addr, addr, addrlen);
}
static const char *av_straddr(fid_av *av, const void *addr, char *buf, size_t *len) {
    return fi_av_straddr(owner<Av>(av)->inner.get(), addr, buf, len);
}

static fi_ops g_av_fi_ops = {
    sizeof(fi_ops),
    av_close,
    STRICT_NOSYS(fi_ops, bind),
    STRICT_NOSYS(fi_ops, control),
    STRICT_NOSYS(fi_ops, ops_open),
    STRICT_NOSYS(fi_ops, tostr),
    STRICT_NOSYS(fi_ops, ops_set),
};
// By member: libfabric 2 adds members (authorization keys, user ids) that 1.17 lacks,
// and leaves them null here: nothing that loads this provider calls them.
static fi_ops_av make_av_ops() {
    fi_ops_av o{};
    o.size = sizeof o;
    o.insert = av_insert;
    o.insertsvc = STRICT_NOSYS(fi_ops_av, insertsvc);
    o.insertsym = STRICT_NOSYS(fi_ops_av, insertsym);
    o.remove = av_remove;
    o.lookup = av_lookup;
    o.straddr = av_straddr;
    o.av_set = STRICT_NOSYS(fi_ops_av, av_set);
    return o;
}
static fi_ops_av g_av_ops = make_av_ops();

int av_open(fid_domain *domain, fi_av_attr *attr, fid_av **av, void *context) {
    auto *d = owner<Domain>(domain);
    fid_av *raw = nullptr;
    int ret = fi_av_open(d->inner.get(), attr, &raw, context);
    if (ret) return ret;
    auto *a = new Av{};
    a->inner.reset(raw);
    a->domain = d;
    a->av.fid.fclass = FI_CLASS_AV;
    a->av.fid.context = context;
    a->av.fid.ops = &g_av_fi_ops;
    a->av.ops = &g_av_ops;
    d->children++;
    *av = &a->av;
    return 0;
}

}  // namespace strict
