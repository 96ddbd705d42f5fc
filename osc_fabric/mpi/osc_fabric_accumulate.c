/*
 * The accumulate family: translates (buffer, count, datatype, op) into the engine's
 * (count, oscf_type, oscf_op). Datatypes may be derived, as long as each is built from
 * one predefined type, the same on origin, target and result, and contiguous
 * (non-contiguous layouts are not supported yet). The engine decides the path (native
 * atomic or active message) and the ordering.
 */
#include "osc_fabric.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/datatype/ompi_datatype_internal.h"
#include "ompi/mca/osc/base/osc_base_obj_convert.h"
#include "ompi/op/op.h"
#include "opal/util/output.h"

#define LOG(...) opal_output_verbose(1, mca_osc_fabric_component.output, "osc/fabric: " __VA_ARGS__)

/* Predefined MPI datatype (by Open MPI's id, which already folds aliases such as
 * MPI_LONG onto fixed-width types where it can) to the engine's element type. */
static int map_type(const ompi_datatype_t *dt, oscf_type *out)
{
    switch (dt->id) {
    case OMPI_DATATYPE_MPI_INT8_T: *out = OSCF_TYPE_INT8; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_UINT8_T: *out = OSCF_TYPE_UINT8; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_INT16_T: *out = OSCF_TYPE_INT16; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_UINT16_T: *out = OSCF_TYPE_UINT16; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_INT32_T: *out = OSCF_TYPE_INT32; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_UINT32_T: *out = OSCF_TYPE_UINT32; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_INT64_T: *out = OSCF_TYPE_INT64; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_UINT64_T: *out = OSCF_TYPE_UINT64; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_FLOAT: *out = OSCF_TYPE_FLOAT; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_DOUBLE: *out = OSCF_TYPE_DOUBLE; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_LONG_DOUBLE: *out = OSCF_TYPE_LONG_DOUBLE; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_C_FLOAT_COMPLEX:
    case OMPI_DATATYPE_MPI_C_COMPLEX:
    case OMPI_DATATYPE_MPI_COMPLEX8: *out = OSCF_TYPE_FLOAT_COMPLEX; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_C_DOUBLE_COMPLEX:
    case OMPI_DATATYPE_MPI_COMPLEX16: *out = OSCF_TYPE_DOUBLE_COMPLEX; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_C_LONG_DOUBLE_COMPLEX:
    case OMPI_DATATYPE_MPI_COMPLEX32: *out = OSCF_TYPE_LONG_DOUBLE_COMPLEX; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_C_BOOL: *out = OSCF_TYPE_BOOL; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_FLOAT_INT: *out = OSCF_TYPE_FLOAT_INT; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_DOUBLE_INT: *out = OSCF_TYPE_DOUBLE_INT; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_LONG_INT: *out = OSCF_TYPE_LONG_INT; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_2INT: *out = OSCF_TYPE_2INT; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_SHORT_INT: *out = OSCF_TYPE_SHORT_INT; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_LONG_DOUBLE_INT: *out = OSCF_TYPE_LONG_DOUBLE_INT; return OMPI_SUCCESS;
    case OMPI_DATATYPE_MPI_WCHAR:
        /* Only MPI_REPLACE and MPI_NO_OP apply to wchar_t: moving it as an unsigned
         * integer of its width is exact. */
        *out = 4 == sizeof(wchar_t) ? OSCF_TYPE_UINT32 : OSCF_TYPE_UINT16;
        return OMPI_SUCCESS;
    default: break;
    }
    /* The rest (MPI_LONG, MPI_AINT, MPI_COUNT, MPI_WCHAR, Fortran integers and reals...)
     * are plain numbers of some width: classify by size and kind. */
    size_t size = 0;
    ompi_datatype_type_size(dt, &size);
    bool is_float = (dt->super.flags & OMPI_DATATYPE_FLAG_DATA_FLOAT) != 0;
    bool is_int = (dt->super.flags & OMPI_DATATYPE_FLAG_DATA_INT) != 0;
    if (is_float && 4 == size) { *out = OSCF_TYPE_FLOAT; return OMPI_SUCCESS; }
    if (is_float && 8 == size) { *out = OSCF_TYPE_DOUBLE; return OMPI_SUCCESS; }
    if (is_int || dt->id == OMPI_DATATYPE_MPI_LONG || dt->id == OMPI_DATATYPE_MPI_UNSIGNED_LONG) {
        bool is_unsigned = dt->id == OMPI_DATATYPE_MPI_UNSIGNED_LONG;
        switch (size) {
        case 1: *out = is_unsigned ? OSCF_TYPE_UINT8 : OSCF_TYPE_INT8; return OMPI_SUCCESS;
        case 2: *out = is_unsigned ? OSCF_TYPE_UINT16 : OSCF_TYPE_INT16; return OMPI_SUCCESS;
        case 4: *out = is_unsigned ? OSCF_TYPE_UINT32 : OSCF_TYPE_INT32; return OMPI_SUCCESS;
        case 8: *out = is_unsigned ? OSCF_TYPE_UINT64 : OSCF_TYPE_INT64; return OMPI_SUCCESS;
        default: break;
        }
    }
    LOG("datatype %s is not supported by the accumulate family", dt->name);
    return MPI_ERR_TYPE;
}

static int map_op(const ompi_op_t *op, oscf_op *out)
{
    static const struct { MPI_Op mpi; oscf_op oscf; } table[] = {
        {MPI_SUM, OSCF_OP_SUM},   {MPI_PROD, OSCF_OP_PROD},   {MPI_MIN, OSCF_OP_MIN},
        {MPI_MAX, OSCF_OP_MAX},   {MPI_LAND, OSCF_OP_LAND},   {MPI_LOR, OSCF_OP_LOR},
        {MPI_LXOR, OSCF_OP_LXOR}, {MPI_BAND, OSCF_OP_BAND},   {MPI_BOR, OSCF_OP_BOR},
        {MPI_BXOR, OSCF_OP_BXOR}, {MPI_REPLACE, OSCF_OP_REPLACE}, {MPI_NO_OP, OSCF_OP_NO_OP},
        {MPI_MINLOC, OSCF_OP_MINLOC}, {MPI_MAXLOC, OSCF_OP_MAXLOC},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
        if (table[i].mpi == op) {
            *out = table[i].oscf;
            return OMPI_SUCCESS;
        }
    }
    LOG("only predefined reductions are allowed in accumulate operations (got %s)", op->o_name);
    return MPI_ERR_OP;
}

/* A (count, datatype) as elements of its one predefined type, contiguous in memory. */
typedef struct elements {
    oscf_type type;
    size_t count;
    ptrdiff_t start; /* byte offset of the first element from the buffer address */
} elements;

static int to_elements(ompi_datatype_t *dt, int count, elements *out)
{
    ompi_datatype_t *prim = NULL;
    uint32_t per = 0;
    ptrdiff_t lb = 0, extent = 0;
    if (count < 0) return OMPI_ERR_BAD_PARAM;
    int rc = ompi_osc_base_get_primitive_type_info(dt, &prim, &per);
    if (OMPI_SUCCESS != rc || NULL == prim) {
        LOG("datatype %s is not built from a single predefined type", dt->name);
        return MPI_ERR_TYPE;
    }
    if (OMPI_SUCCESS != (rc = map_type(prim, &out->type))) return rc;
    out->count = (size_t) count * per;
    out->start = 0;
    if (0 == out->count) return OMPI_SUCCESS;
    /* The value/index pairs have holes (MPI_DOUBLE_INT is 12 bytes in a 16-byte
     * struct), so an array of them is not "contiguous" to Open MPI, but it is exactly
     * the array of C structs the engine works on. */
    bool dense = ompi_datatype_is_contiguous_memory_layout(dt, count) ||
                 (ompi_datatype_is_predefined(dt) && dt->super.ub - dt->super.lb ==
                                                         (ptrdiff_t) oscf_type_size(out->type));
    if (!dense) {
        LOG("non-contiguous datatype %s is not supported yet in accumulate operations", dt->name);
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    ompi_datatype_get_true_extent(dt, &lb, &extent);
    out->start = lb;
    return OMPI_SUCCESS;
}

/* The other side of an accumulate must carry the same elements. */
static int same_elements(const elements *a, const elements *b, const char *what)
{
    if (a->type != b->type || a->count != b->count) {
        LOG("%s: origin/result describe %zu elements of type %d, target %zu of type %d", what,
            a->count, (int) a->type, b->count, (int) b->type);
        return OMPI_ERR_BAD_PARAM;
    }
    return OMPI_SUCCESS;
}

/* One accumulate-family call, translated. */
typedef struct acc_args {
    oscf_win *win;
    int target;
    const char *origin;
    char *result;
    elements t;
    oscf_op op;
    ptrdiff_t target_disp;
} acc_args;

static int prepare(acc_args *a, const void *origin_addr, int origin_count, ompi_datatype_t *origin_dt,
                   void *result_addr, int result_count, ompi_datatype_t *result_dt, int target,
                   ptrdiff_t target_disp, int target_count, ompi_datatype_t *target_dt,
                   ompi_op_t *op, struct ompi_win_t *win)
{
    const char *what = NULL == result_dt ? "MPI_Accumulate" : "MPI_Get_accumulate";
    elements o, r;
    *a = (acc_args){.win = ompi_osc_fabric_win(win), .target = target, .target_disp = target_disp};
    int rc = map_op(op, &a->op);
    if (OMPI_SUCCESS == rc) rc = to_elements(target_dt, target_count, &a->t);
    if (OMPI_SUCCESS != rc) return rc;
    if (OSCF_OP_NO_OP != a->op) {
        /* MPI_NO_OP ignores the origin buffer entirely. */
        if (OMPI_SUCCESS != (rc = to_elements(origin_dt, origin_count, &o))) return rc;
        if (OMPI_SUCCESS != (rc = same_elements(&o, &a->t, what))) return rc;
        a->origin = (const char *) origin_addr + o.start;
    }
    if (NULL != result_dt) {
        if (OMPI_SUCCESS != (rc = to_elements(result_dt, result_count, &r))) return rc;
        if (OMPI_SUCCESS != (rc = same_elements(&r, &a->t, what))) return rc;
        a->result = (char *) result_addr + r.start;
    }
    return OMPI_SUCCESS;
}

static int run(void *arg, const oscf_notify *notify)
{
    const acc_args *a = arg;
    return ompi_osc_fabric_status(oscf_win_accumulate(a->win, a->target, a->origin, a->result,
                                                      a->t.count, a->t.type, a->op, a->target_disp,
                                                      a->t.start, notify));
}

int ompi_osc_fabric_accumulate(const void *origin_addr, int origin_count,
                               struct ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp,
                               int target_count, struct ompi_datatype_t *target_dt,
                               struct ompi_op_t *op, struct ompi_win_t *win)
{
    acc_args a;
    if (MPI_PROC_NULL == target) return OMPI_SUCCESS;
    int rc = prepare(&a, origin_addr, origin_count, origin_dt, NULL, 0, NULL, target, target_disp,
                     target_count, target_dt, op, win);
    return OMPI_SUCCESS != rc ? rc : run(&a, NULL);
}

int ompi_osc_fabric_get_accumulate(const void *origin_addr, int origin_count,
                                   struct ompi_datatype_t *origin_dt, void *result_addr,
                                   int result_count, struct ompi_datatype_t *result_dt,
                                   int target, ptrdiff_t target_disp, int target_count,
                                   struct ompi_datatype_t *target_dt, struct ompi_op_t *op,
                                   struct ompi_win_t *win)
{
    acc_args a;
    if (MPI_PROC_NULL == target) return OMPI_SUCCESS;
    int rc = prepare(&a, origin_addr, origin_count, origin_dt, result_addr, result_count, result_dt,
                     target, target_disp, target_count, target_dt, op, win);
    return OMPI_SUCCESS != rc ? rc : run(&a, NULL);
}

int ompi_osc_fabric_raccumulate(const void *origin_addr, int origin_count,
                                struct ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp,
                                int target_count, struct ompi_datatype_t *target_dt,
                                struct ompi_op_t *op, struct ompi_win_t *win,
                                struct ompi_request_t **request)
{
    acc_args a;
    int rc = prepare(&a, origin_addr, origin_count, origin_dt, NULL, 0, NULL, target, target_disp,
                     target_count, target_dt, op, win);
    return OMPI_SUCCESS != rc ? rc : ompi_osc_fabric_request_start(win, target, run, &a, request);
}

int ompi_osc_fabric_rget_accumulate(const void *origin_addr, int origin_count,
                                    struct ompi_datatype_t *origin_dt, void *result_addr,
                                    int result_count, struct ompi_datatype_t *result_dt,
                                    int target, ptrdiff_t target_disp, int target_count,
                                    struct ompi_datatype_t *target_dt, struct ompi_op_t *op,
                                    struct ompi_win_t *win, struct ompi_request_t **request)
{
    acc_args a;
    int rc = prepare(&a, origin_addr, origin_count, origin_dt, result_addr, result_count, result_dt,
                     target, target_disp, target_count, target_dt, op, win);
    return OMPI_SUCCESS != rc ? rc : ompi_osc_fabric_request_start(win, target, run, &a, request);
}

int ompi_osc_fabric_fetch_and_op(const void *origin_addr, void *result_addr,
                                 struct ompi_datatype_t *dt, int target, ptrdiff_t target_disp,
                                 struct ompi_op_t *op, struct ompi_win_t *win)
{
    return ompi_osc_fabric_get_accumulate(origin_addr, 1, dt, result_addr, 1, dt, target,
                                          target_disp, 1, dt, op, win);
}

int ompi_osc_fabric_compare_and_swap(const void *origin_addr, const void *compare_addr,
                                     void *result_addr, struct ompi_datatype_t *dt, int target,
                                     ptrdiff_t target_disp, struct ompi_win_t *win)
{
    elements e;
    if (MPI_PROC_NULL == target) return OMPI_SUCCESS;
    int rc = to_elements(dt, 1, &e);
    if (OMPI_SUCCESS != rc) return rc;
    if (1 != e.count) {
        LOG("MPI_Compare_and_swap needs a single predefined element");
        return MPI_ERR_TYPE;
    }
    rc = oscf_win_compare_and_swap(ompi_osc_fabric_win(win), target, origin_addr, compare_addr,
                                   result_addr, e.type, target_disp, e.start);
    return ompi_osc_fabric_status(rc);
}
