/*
 * The accumulate family: translates (buffer, count, datatype, op) into engine segments
 * of whole elements of one oscf_type. Datatypes may be derived and non-contiguous, as
 * long as origin, target and result are built from the same predefined type. The
 * engine decides the path (native atomic or active message) and the ordering.
 */
#include "osc_fabric.h"

#include "ompi/datatype/ompi_datatype.h"
#include "ompi/datatype/ompi_datatype_internal.h"
#include "ompi/mca/osc/base/osc_base_obj_convert.h"
#include "ompi/op/op.h"
#include "opal/util/output.h"

#include <stdlib.h>
#include <string.h>

#define LOG(...) opal_output_verbose(1, mca_osc_fabric_component.output, "osc/fabric: " __VA_ARGS__)

/* The engine's integer type of a width, in bytes; false for a width it has none of. */
static bool integer_of_width(size_t size, bool is_unsigned, oscf_type *out)
{
    switch (size) {
    case 1: *out = is_unsigned ? OSCF_TYPE_UINT8 : OSCF_TYPE_INT8; return true;
    case 2: *out = is_unsigned ? OSCF_TYPE_UINT16 : OSCF_TYPE_INT16; return true;
    case 4: *out = is_unsigned ? OSCF_TYPE_UINT32 : OSCF_TYPE_INT32; return true;
    case 8: *out = is_unsigned ? OSCF_TYPE_UINT64 : OSCF_TYPE_INT64; return true;
    default: return false;
    }
}

/* Predefined MPI datatype (by Open MPI's id, which already folds aliases such as
 * MPI_LONG onto fixed-width types where it can) to the engine's element type. */
static bool classify_type(const ompi_datatype_t *dt, oscf_type *out)
{
    switch (dt->id) {
    case OMPI_DATATYPE_MPI_INT8_T: *out = OSCF_TYPE_INT8; return true;
    case OMPI_DATATYPE_MPI_UINT8_T: *out = OSCF_TYPE_UINT8; return true;
    case OMPI_DATATYPE_MPI_INT16_T: *out = OSCF_TYPE_INT16; return true;
    case OMPI_DATATYPE_MPI_UINT16_T: *out = OSCF_TYPE_UINT16; return true;
    case OMPI_DATATYPE_MPI_INT32_T: *out = OSCF_TYPE_INT32; return true;
    case OMPI_DATATYPE_MPI_UINT32_T: *out = OSCF_TYPE_UINT32; return true;
    case OMPI_DATATYPE_MPI_INT64_T: *out = OSCF_TYPE_INT64; return true;
    case OMPI_DATATYPE_MPI_UINT64_T: *out = OSCF_TYPE_UINT64; return true;
    case OMPI_DATATYPE_MPI_FLOAT: *out = OSCF_TYPE_FLOAT; return true;
    case OMPI_DATATYPE_MPI_DOUBLE: *out = OSCF_TYPE_DOUBLE; return true;
    case OMPI_DATATYPE_MPI_LONG_DOUBLE: *out = OSCF_TYPE_LONG_DOUBLE; return true;
    case OMPI_DATATYPE_MPI_C_FLOAT_COMPLEX:
    case OMPI_DATATYPE_MPI_C_COMPLEX:
    case OMPI_DATATYPE_MPI_COMPLEX8: *out = OSCF_TYPE_FLOAT_COMPLEX; return true;
    case OMPI_DATATYPE_MPI_C_DOUBLE_COMPLEX:
    case OMPI_DATATYPE_MPI_COMPLEX16: *out = OSCF_TYPE_DOUBLE_COMPLEX; return true;
    case OMPI_DATATYPE_MPI_C_LONG_DOUBLE_COMPLEX:
    case OMPI_DATATYPE_MPI_COMPLEX32: *out = OSCF_TYPE_LONG_DOUBLE_COMPLEX; return true;
    case OMPI_DATATYPE_MPI_C_BOOL: *out = OSCF_TYPE_BOOL; return true;
    case OMPI_DATATYPE_MPI_FLOAT_INT: *out = OSCF_TYPE_FLOAT_INT; return true;
    case OMPI_DATATYPE_MPI_DOUBLE_INT: *out = OSCF_TYPE_DOUBLE_INT; return true;
    case OMPI_DATATYPE_MPI_LONG_INT: *out = OSCF_TYPE_LONG_INT; return true;
    case OMPI_DATATYPE_MPI_2INT: *out = OSCF_TYPE_2INT; return true;
    case OMPI_DATATYPE_MPI_SHORT_INT: *out = OSCF_TYPE_SHORT_INT; return true;
    case OMPI_DATATYPE_MPI_LONG_DOUBLE_INT: *out = OSCF_TYPE_LONG_DOUBLE_INT; return true;
    case OMPI_DATATYPE_MPI_WCHAR:
        /* Only MPI_REPLACE and MPI_NO_OP apply to wchar_t: moving it as an unsigned
         * integer of its width is exact. */
        *out = 4 == sizeof(wchar_t) ? OSCF_TYPE_UINT32 : OSCF_TYPE_UINT16;
        return true;
    default: break;
    }
    size_t size = 0;
    ompi_datatype_type_size(dt, &size);
    /* Fortran's types whose width the compiler chose: the same arithmetic as the C type
     * of that width. Character, logical and MPI_PACKED take only MPI_REPLACE and
     * MPI_NO_OP, logical also the logical ops (Open MPI's argument checks refuse the
     * rest); moved as unsigned integers of their width they are exact, and a logical op
     * on them yields 0 or 1, which is how Fortran's compilers here write .FALSE. and
     * .TRUE.. A pair type's MINLOC and MAXLOC need its own element layout: MPI_2INTEGER
     * is MPI_2INT's, MPI_2REAL and MPI_2DOUBLE_PRECISION pairs of the C real of their
     * width; the pairs of complexes (MPI_REPLACE and MPI_NO_OP only) are moved whole, as
     * a complex of their width is. */
    switch (dt->id) {
    case OMPI_DATATYPE_MPI_2REAL:
    case OMPI_DATATYPE_MPI_2DBLPREC:
        if (2 * sizeof(float) == size) {
            *out = OSCF_TYPE_2FLOAT;
            return true;
        }
        if (2 * sizeof(double) == size) {
            *out = OSCF_TYPE_2DOUBLE;
            return true;
        }
        return false;
    case OMPI_DATATYPE_MPI_COMPLEX:
    case OMPI_DATATYPE_MPI_DOUBLE_COMPLEX:
    case OMPI_DATATYPE_MPI_LONG_DOUBLE_COMPLEX:
    case OMPI_DATATYPE_MPI_2COMPLEX:
    case OMPI_DATATYPE_MPI_2DOUBLE_COMPLEX:
        switch (size) {
        case 8: *out = OSCF_TYPE_FLOAT_COMPLEX; return true;
        case 16: *out = OSCF_TYPE_DOUBLE_COMPLEX; return true;
        case 2 * sizeof(long double): *out = OSCF_TYPE_LONG_DOUBLE_COMPLEX; return true;
        default: return false;
        }
    case OMPI_DATATYPE_MPI_2INTEGER:
        if (2 * sizeof(int) != size) return false;
        *out = OSCF_TYPE_2INT;
        return true;
    case OMPI_DATATYPE_MPI_LOGICAL:
    case OMPI_DATATYPE_MPI_CHARACTER:
    case OMPI_DATATYPE_MPI_PACKED: return integer_of_width(size, true, out);
    default: break;
    }
    /* The rest (MPI_LONG, MPI_AINT, MPI_COUNT, Fortran integers and reals...) are plain
     * numbers of some width: classify by size and kind. A complex type has both kind
     * bits set (OMPI_DATATYPE_FLAG_DATA_COMPLEX) and is none of these. */
    const unsigned kind = dt->super.flags & OMPI_DATATYPE_FLAG_DATA_TYPE;
    bool is_float = kind == OMPI_DATATYPE_FLAG_DATA_FLOAT;
    bool is_int = kind == OMPI_DATATYPE_FLAG_DATA_INT;
    if (is_float && 4 == size) {
        *out = OSCF_TYPE_FLOAT;
        return true;
    }
    if (is_float && 8 == size) {
        *out = OSCF_TYPE_DOUBLE;
        return true;
    }
    if (is_int || dt->id == OMPI_DATATYPE_MPI_LONG || dt->id == OMPI_DATATYPE_MPI_UNSIGNED_LONG)
        return integer_of_width(size, dt->id == OMPI_DATATYPE_MPI_UNSIGNED_LONG, out);
    return false;
}

/* What classify_type and op_of answer for each predefined datatype and reduction, by
 * Open MPI's index, filled once (ompi_osc_fabric_accumulate_init): an accumulate's
 * translation is then a load each, which an 8-byte accumulate on the fast road notices. */
static signed char type_by_id[OMPI_DATATYPE_MPI_MAX_PREDEFINED]; /* oscf_type + 1; 0: none */
#define OP_INDICES 32
static signed char op_by_index[OP_INDICES]; /* oscf_op + 1; 0: none */

static bool type_of(const ompi_datatype_t *dt, oscf_type *out)
{
    if (ompi_datatype_is_predefined(dt) && dt->id < OMPI_DATATYPE_MPI_MAX_PREDEFINED && type_by_id[dt->id]) {
        *out = (oscf_type)(type_by_id[dt->id] - 1);
        return true;
    }
    return classify_type(dt, out);
}

int ompi_osc_fabric_map_type(const ompi_datatype_t *dt, oscf_type *out)
{
    if (type_of(dt, out)) return OMPI_SUCCESS;
    LOG("datatype %s is not supported by the accumulate family", dt->name);
    return MPI_ERR_TYPE;
}

static bool search_op(const ompi_op_t *op, oscf_op *out)
{
    static const struct {
        MPI_Op mpi;
        oscf_op oscf;
    } table[] = {
        {MPI_SUM, OSCF_OP_SUM},       {MPI_PROD, OSCF_OP_PROD},       {MPI_MIN, OSCF_OP_MIN},
        {MPI_MAX, OSCF_OP_MAX},       {MPI_LAND, OSCF_OP_LAND},       {MPI_LOR, OSCF_OP_LOR},
        {MPI_LXOR, OSCF_OP_LXOR},     {MPI_BAND, OSCF_OP_BAND},       {MPI_BOR, OSCF_OP_BOR},
        {MPI_BXOR, OSCF_OP_BXOR},     {MPI_REPLACE, OSCF_OP_REPLACE}, {MPI_NO_OP, OSCF_OP_NO_OP},
        {MPI_MINLOC, OSCF_OP_MINLOC}, {MPI_MAXLOC, OSCF_OP_MAXLOC},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
        if (table[i].mpi == op) {
            *out = table[i].oscf;
            return true;
        }
    }
    return false;
}

static bool op_of(const ompi_op_t *op, oscf_op *out)
{
    const int i = op->o_f_to_c_index;
    if (0 != (op->o_flags & OMPI_OP_FLAGS_INTRINSIC) && i >= 0 && i < OP_INDICES && op_by_index[i]) {
        *out = (oscf_op)(op_by_index[i] - 1);
        return true;
    }
    return search_op(op, out);
}

void ompi_osc_fabric_accumulate_init(void)
{
    for (int id = 0; id < OMPI_DATATYPE_MPI_MAX_PREDEFINED; id++) {
        const ompi_datatype_t *dt = ompi_datatype_basicDatatypes[id];
        oscf_type t;
        type_by_id[id] = NULL != dt && dt->id == id && classify_type(dt, &t) ? (signed char)(t + 1) : 0;
    }
    const MPI_Op ops[] = {MPI_SUM,  MPI_PROD, MPI_MIN,  MPI_MAX,     MPI_LAND,  MPI_LOR,    MPI_LXOR,
                          MPI_BAND, MPI_BOR,  MPI_BXOR, MPI_REPLACE, MPI_NO_OP, MPI_MINLOC, MPI_MAXLOC};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        oscf_op o;
        const int i = ops[k]->o_f_to_c_index;
        if (i >= 0 && i < OP_INDICES && search_op(ops[k], &o)) op_by_index[i] = (signed char)(o + 1);
    }
}

int ompi_osc_fabric_map_op(const ompi_op_t *op, oscf_op *out)
{
    if (op_of(op, out)) return OMPI_SUCCESS;
    LOG("only predefined reductions are allowed in accumulate operations (got %s)", op->o_name);
    return MPI_ERR_OP;
}

/* The element type of a (count, datatype) built from one predefined type. */
int ompi_osc_fabric_element_type(ompi_datatype_t *dt, oscf_type *out)
{
    ompi_datatype_t *prim = NULL;
    uint32_t per = 0;
    int rc = ompi_osc_base_get_primitive_type_info(dt, &prim, &per);
    if (OMPI_SUCCESS != rc || NULL == prim) {
        LOG("datatype %s is not built from a single predefined type", dt->name);
        return MPI_ERR_TYPE;
    }
    return ompi_osc_fabric_map_type(prim, out);
}

/* MPI_BYTE travels as an 8-bit unsigned integer, but the standard defines only the
 * bitwise reductions on it (besides MPI_REPLACE and MPI_NO_OP, allowed on any type). */
static bool byte_op_allowed(oscf_op op)
{
    return OSCF_OP_BAND == op || OSCF_OP_BOR == op || OSCF_OP_BXOR == op || OSCF_OP_REPLACE == op ||
           OSCF_OP_NO_OP == op;
}

static int check_byte_op(ompi_datatype_t *dt, oscf_op op)
{
    ompi_datatype_t *prim = NULL;
    uint32_t per = 0;
    /* By object, not id: Open MPI gives MPI_BYTE and MPI_UINT8_T the same id. */
    if (ompi_datatype_is_predefined(dt))
        prim = dt;
    else if (OMPI_SUCCESS != ompi_osc_base_get_primitive_type_info(dt, &prim, &per))
        return OMPI_SUCCESS;
    if ((MPI_Datatype)prim != MPI_BYTE || byte_op_allowed(op)) return OMPI_SUCCESS;
    LOG("only MPI_BAND, MPI_BOR, MPI_BXOR, MPI_REPLACE and MPI_NO_OP apply to MPI_BYTE");
    return MPI_ERR_OP;
}

/* Pieces of one side. A predefined value/index pair type has holes (MPI_DOUBLE_INT is 12
 * bytes in a 16-byte struct), yet an array of them is exactly the array of C structs the
 * engine reduces: one piece. */
static int side_pieces(ompi_datatype_t *dt, int count, const void *base, oscf_type type,
                       ompi_osc_fabric_pieces *out)
{
    if (ompi_datatype_is_predefined(dt) && count > 0 &&
        dt->super.ub - dt->super.lb == (ptrdiff_t)oscf_type_size(type)) {
        return ompi_osc_fabric_pieces_one((char *)base + dt->super.lb, oscf_type_size(type) * (size_t)count,
                                          out);
    }
    int rc = ompi_osc_fabric_pieces_of(dt, count, base, out);
    ompi_datatype_t *prim = NULL;
    uint32_t per = 0;
    if (OMPI_SUCCESS != rc || type < OSCF_TYPE_FLOAT_INT ||
        OMPI_SUCCESS != ompi_osc_base_get_primitive_type_info(dt, &prim, &per))
        return rc;
    /* Derived from a pair type: the convertor's pieces skip the holes inside each
     * element; the engine wants each element's whole struct. */
    ompi_osc_fabric_pieces raw = *out;
    if (raw.v == out->inline_v) raw.v = raw.inline_v;
    rc = ompi_osc_fabric_pieces_whole(&raw, prim->super.size, oscf_type_size(type), out);
    ompi_osc_fabric_pieces_free(&raw);
    return rc;
}

/* One accumulate-family call, translated: segments of whole elements. */
typedef struct acc_args {
    oscf_win *win;
    int target;
    oscf_type type;
    oscf_op op;
    ptrdiff_t target_disp;
    int origin_side, result_side; /* index into the cut's sides, or -1 */
    oscf_acc_segment *segs;
    size_t n, cap;
    oscf_acc_segment inline_segs[4];
} acc_args;

static int add_segment(void *arg, char *at[], size_t len)
{
    acc_args *a = arg;
    int rc = ompi_osc_fabric_grow((void **)&a->segs, a->n, &a->cap, sizeof(*a->segs), a->inline_segs);
    if (OMPI_SUCCESS != rc) return rc;
    a->segs[a->n++] = (oscf_acc_segment){
        .origin = a->origin_side < 0 ? NULL : at[a->origin_side],
        .result = a->result_side < 0 ? NULL : at[a->result_side],
        .target_offset = (int64_t)(intptr_t)at[0], /* flattened from address 0 */
        .count = len / oscf_type_size(a->type),
    };
    return OMPI_SUCCESS;
}

static void release(acc_args *a)
{
    if (a->segs != a->inline_segs) free(a->segs);
}

/* A predefined type without holes, whose elements the engine reduces as they are. */
static bool plain_type(const ompi_datatype_t *dt, oscf_type *t)
{
    return type_of(dt, t) && dt->super.lb == 0 && dt->super.ub == (ptrdiff_t)oscf_type_size(*t);
}

/* The common call, MPI_Accumulate(buf, n, MPI_LONG, ..., n, MPI_LONG, ...) and its
 * fetching forms: every side the same predefined type without holes and the same count,
 * and a predefined op. Quiet: false sends the call to the general translation, which
 * reports what is wrong with it. */
static bool one_type_call(int origin_count, ompi_datatype_t *origin_dt, int result_count,
                          ompi_datatype_t *result_dt, int target_count, ompi_datatype_t *target_dt,
                          ompi_op_t *op, oscf_type *t, oscf_op *o)
{
    return target_count > 0 && ompi_datatype_is_predefined(target_dt) &&
           (NULL == result_dt || (result_dt == target_dt && result_count == target_count)) && op_of(op, o) &&
           (OSCF_OP_NO_OP == *o || (origin_dt == target_dt && origin_count == target_count)) &&
           plain_type(target_dt, t);
}

/* That call is one segment: skipping the convertor is most of an 8-byte accumulate's
 * cost on the origin. Returns false (a untouched but for type and op) when the general
 * cut is needed. */
static bool one_segment(acc_args *a, const void *origin_addr, int origin_count, ompi_datatype_t *origin_dt,
                        void *result_addr, int result_count, ompi_datatype_t *result_dt, int target_count,
                        ompi_datatype_t *target_dt, ompi_op_t *op)
{
    if (!one_type_call(origin_count, origin_dt, result_count, result_dt, target_count, target_dt, op,
                       &a->type, &a->op))
        return false;
    a->segs[0] = (oscf_acc_segment){
        .origin = OSCF_OP_NO_OP != a->op ? (void *)origin_addr : NULL,
        .result = NULL != result_dt ? result_addr : NULL,
        .target_offset = 0,
        .count = (size_t)target_count,
    };
    a->n = 1;
    return true;
}

static int prepare(acc_args *a, const void *origin_addr, int origin_count, ompi_datatype_t *origin_dt,
                   void *result_addr, int result_count, ompi_datatype_t *result_dt, int target,
                   ptrdiff_t target_disp, int target_count, ompi_datatype_t *target_dt, ompi_op_t *op,
                   struct ompi_win_t *win)
{
    /* Field by field: zeroing the inline segments of a compound literal costs more than
     * the rest of an 8-byte accumulate's translation. */
    a->win = ompi_osc_fabric_win(win);
    a->target = target;
    a->target_disp = target_disp;
    a->origin_side = a->result_side = -1;
    a->n = 0;
    a->segs = a->inline_segs;
    a->cap = sizeof(a->inline_segs) / sizeof(a->inline_segs[0]);
    int rc = ompi_osc_fabric_map_op(op, &a->op);
    if (OMPI_SUCCESS == rc && one_segment(a, origin_addr, origin_count, origin_dt, result_addr, result_count,
                                          result_dt, target_count, target_dt, op))
        return check_byte_op(target_dt, a->op);
    if (OMPI_SUCCESS == rc) rc = ompi_osc_fabric_element_type(target_dt, &a->type);
    if (OMPI_SUCCESS == rc) rc = check_byte_op(target_dt, a->op);
    if (OMPI_SUCCESS != rc) return rc;

    /* MPI_NO_OP ignores the origin buffer entirely. */
    struct {
        ompi_datatype_t *dt;
        int count;
        const void *base;
        int *slot;
    } side[3] = {
        {target_dt, target_count, NULL, NULL},
        {OSCF_OP_NO_OP == a->op ? NULL : origin_dt, origin_count, origin_addr, &a->origin_side},
        {result_dt, result_count, result_addr, &a->result_side},
    };
    ompi_osc_fabric_pieces pieces[3];
    ompi_osc_fabric_pieces *sides[3];
    int nsides = 0;
    for (int i = 0; i < 3 && OMPI_SUCCESS == rc; i++) {
        if (NULL == side[i].dt) continue;
        oscf_type t;
        rc = ompi_osc_fabric_element_type(side[i].dt, &t);
        if (OMPI_SUCCESS == rc && t != a->type) {
            LOG("origin, target and result must be built from the same predefined type");
            rc = OMPI_ERR_BAD_PARAM;
        }
        if (OMPI_SUCCESS == rc) rc = side_pieces(side[i].dt, side[i].count, side[i].base, t, &pieces[nsides]);
        if (OMPI_SUCCESS == rc) {
            if (side[i].slot) *side[i].slot = nsides;
            sides[nsides] = &pieces[nsides];
            nsides++;
        }
    }
    if (OMPI_SUCCESS == rc) rc = ompi_osc_fabric_cut(sides, nsides, oscf_type_size(a->type), add_segment, a);
    for (int i = 0; i < nsides; i++) ompi_osc_fabric_pieces_free(&pieces[i]);
    if (OMPI_SUCCESS != rc) release(a);
    return rc;
}

static int run(void *arg, const oscf_notify *notify)
{
    const acc_args *a = arg;
    return ompi_osc_fabric_status(
        oscf_win_accumulatev(a->win, a->target, a->segs, a->n, a->type, a->op, a->target_disp, notify));
}

static size_t data_bytes(ompi_datatype_t *dt, int count)
{
    size_t size = 0;
    if (NULL == dt || count <= 0) return 0;
    ompi_datatype_type_size(dt, &size);
    return size * (size_t)count;
}

/* A call that moves no data on any side (count 0, or a datatype of size 0) is a no-op
 * whatever its (op, type): nothing is ever reduced, so a pair that would be refused
 * for data (MPI_SUM on MPI_BYTE) is not an error here, as in osc/rdma. It still goes
 * to the engine, which checks the epoch and completes a request at once. */
static bool moves_nothing(int origin_count, ompi_datatype_t *origin_dt, int result_count,
                          ompi_datatype_t *result_dt, int target_count, ompi_datatype_t *target_dt,
                          const ompi_op_t *op)
{
    return 0 == data_bytes(target_dt, target_count) &&
           ((MPI_Op)op == MPI_NO_OP || 0 == data_bytes(origin_dt, origin_count)) &&
           0 == data_bytes(result_dt, result_count);
}

/* A non-fetching accumulate of small pieces to a peer whose engine applies its type's
 * updates (engine/packed_layout.cpp): the target's layout as runs, the origin's elements
 * packed by the convertor. Elsewhere (ourselves, an on-node peer reached directly,
 * native atomics) the segments of the general path. */
typedef struct acc_layout {
    oscf_win *win;
    int target;
    ptrdiff_t target_disp;
    oscf_type type;
    oscf_op op;
    ompi_osc_fabric_runs runs;
    const void *origin_addr; /* for the packer */
    int origin_count;
    ompi_datatype_t *origin_dt;
    size_t pair_value; /* a value/index pair type's value bytes; 0 for single values */
} acc_layout;

/* A side's packer: a pair type's streams hold whole structs, as the engine reduces them. */
static int side_packer(const acc_layout *l, ompi_datatype_t *dt, int count, const void *base, bool pack,
                       oscf_packer *out)
{
    return 0 == l->pair_value ? ompi_osc_fabric_packer(dt, count, base, pack, out)
                              : ompi_osc_fabric_pair_packer(dt, count, base, pack, l->pair_value,
                                                            oscf_type_size(l->type), out);
}

/* The value bytes of a value/index pair type (its index is an int after them). */
static size_t pair_value_size(oscf_type t)
{
    switch (t) {
    case OSCF_TYPE_FLOAT_INT: return sizeof(float);
    case OSCF_TYPE_DOUBLE_INT: return sizeof(double);
    case OSCF_TYPE_LONG_INT: return sizeof(long);
    case OSCF_TYPE_2INT: return sizeof(int);
    case OSCF_TYPE_SHORT_INT: return sizeof(short);
    case OSCF_TYPE_LONG_DOUBLE_INT: return sizeof(long double);
    default: return 0;
    }
}

/* A pair type whose sides are all the predefined type: an array of it is one piece of
 * structs already (side_pieces), no layout to walk. */
static bool pair_array(oscf_type t, bool all_predefined)
{
    return all_predefined && 0 != pair_value_size(t);
}

/* Pair types take the layout form when the target's runs widen to whole structs
 * (ompi_osc_fabric_pair_runs); l->runs is freed when they do not. */
static bool pair_layout(acc_layout *l, oscf_type t)
{
    l->pair_value = pair_value_size(t);
    if (0 == l->pair_value || ompi_osc_fabric_pair_runs(&l->runs, l->pair_value, oscf_type_size(t)))
        return true;
    ompi_osc_fabric_runs_free(&l->runs);
    return false;
}

static int run_layout(void *arg, const oscf_notify *notify)
{
    const acc_layout *l = arg;
    oscf_packer pk;
    int rc = side_packer(l, l->origin_dt, l->origin_count, l->origin_addr, true, &pk);
    if (OMPI_SUCCESS != rc) return rc;
    return ompi_osc_fabric_status(oscf_win_accumulate_packed(l->win, l->target, l->runs.v, l->runs.n, l->type,
                                                             l->op, l->target_disp, &pk, notify));
}

/* The rest of l once a call takes the layout form (runs, win and op are in already). */
static void layout_fill(acc_layout *l, int target, ptrdiff_t target_disp, oscf_type type,
                        const void *origin_addr, int origin_count, ompi_datatype_t *origin_dt)
{
    l->target = target;
    l->target_disp = target_disp;
    l->type = type;
    l->origin_addr = origin_addr;
    l->origin_count = origin_count;
    l->origin_dt = origin_dt;
}

/* Fills l and returns true when a plain accumulate's elements are single values of one
 * type, the target's engine applies them, and its pieces are small (as puts,
 * ompi_osc_fabric_layout_wanted). The cheap questions first: the walk of the target's
 * layout is only for calls that can take the layout form. */
static bool layout_wanted(acc_layout *l, const void *origin_addr, int origin_count,
                          ompi_datatype_t *origin_dt, int target, ptrdiff_t target_disp, int target_count,
                          ompi_datatype_t *target_dt, ompi_op_t *op, struct ompi_win_t *win)
{
    oscf_type ot, tt;
    l->win = ompi_osc_fabric_win(win);
    if (MPI_PROC_NULL == target || (MPI_Op)op == MPI_NO_OP ||
        OMPI_SUCCESS != ompi_osc_fabric_map_op(op, &l->op) ||
        OMPI_SUCCESS != ompi_osc_fabric_element_type(target_dt, &tt) ||
        OMPI_SUCCESS != ompi_osc_fabric_element_type(origin_dt, &ot) || ot != tt ||
        OMPI_SUCCESS != check_byte_op(target_dt, l->op) || 1 != oscf_win_engine_applies(l->win, target, tt) ||
        pair_array(tt, ompi_datatype_is_predefined(origin_dt) && ompi_datatype_is_predefined(target_dt)))
        return false;
    if (!ompi_osc_fabric_layout_wanted(origin_dt, origin_count, target_dt, target_count, &l->runs) ||
        !pair_layout(l, tt))
        return false;
    layout_fill(l, target, target_disp, tt, origin_addr, origin_count, origin_dt);
    return true;
}

/* A get_accumulate of small pieces (on any side) to a peer whose engine applies its
 * type's updates: the target's layout as runs, the origin's elements packed (none for
 * MPI_NO_OP), the old values unpacked into the result's layout. */
typedef struct fetch_layout {
    acc_layout l;
    void *result_addr;
    int result_count;
    ompi_datatype_t *result_dt;
} fetch_layout;

static int run_fetch_layout(void *arg, const oscf_notify *notify)
{
    const fetch_layout *f = arg;
    const acc_layout *l = &f->l;
    const bool with_origin = OSCF_OP_NO_OP != l->op;
    oscf_packer opk, rpk;
    int rc = side_packer(l, f->result_dt, f->result_count, f->result_addr, false, &rpk);
    if (OMPI_SUCCESS != rc) return rc;
    if (with_origin &&
        OMPI_SUCCESS != (rc = side_packer(l, l->origin_dt, l->origin_count, l->origin_addr, true, &opk))) {
        rpk.release(rpk.arg);
        return rc;
    }
    return ompi_osc_fabric_status(oscf_win_get_accumulate_packed(l->win, l->target, l->runs.v, l->runs.n,
                                                                 l->type, l->op, l->target_disp,
                                                                 with_origin ? &opk : NULL, &rpk, notify));
}

/* Fills f and returns true when a get_accumulate's sides are all built from one
 * single-value type, hold the same bytes, the target's engine applies them, and some
 * side's pieces are small (as ompi_osc_fabric_layout_wanted). Anything else, errors
 * included, takes the general path, which reports them. */
static bool fetch_layout_wanted(fetch_layout *f, const void *origin_addr, int origin_count,
                                ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                                ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp,
                                int target_count, ompi_datatype_t *target_dt, ompi_op_t *op,
                                struct ompi_win_t *win)
{
    acc_layout *l = &f->l;
    const bool with_origin = (MPI_Op)op != MPI_NO_OP;
    const bool origin_one =
        !with_origin || ompi_datatype_is_contiguous_memory_layout(origin_dt, origin_count);
    const bool result_one = ompi_datatype_is_contiguous_memory_layout(result_dt, result_count);
    if (MPI_PROC_NULL == target ||
        (origin_one && result_one && ompi_datatype_is_contiguous_memory_layout(target_dt, target_count)))
        return false;
    oscf_type tt, st;
    l->win = ompi_osc_fabric_win(win);
    if (OMPI_SUCCESS != ompi_osc_fabric_map_op(op, &l->op) ||
        OMPI_SUCCESS != ompi_osc_fabric_element_type(target_dt, &tt) ||
        OMPI_SUCCESS != ompi_osc_fabric_element_type(result_dt, &st) || st != tt ||
        (with_origin && (OMPI_SUCCESS != ompi_osc_fabric_element_type(origin_dt, &st) || st != tt)) ||
        OMPI_SUCCESS != check_byte_op(target_dt, l->op) || 1 != oscf_win_engine_applies(l->win, target, tt) ||
        pair_array(tt, ompi_datatype_is_predefined(target_dt) && ompi_datatype_is_predefined(result_dt) &&
                           (!with_origin || ompi_datatype_is_predefined(origin_dt))))
        return false;
    const size_t bytes = data_bytes(target_dt, target_count);
    if (0 == bytes || data_bytes(result_dt, result_count) != bytes ||
        (with_origin && data_bytes(origin_dt, origin_count) != bytes))
        return false;
    if (OMPI_SUCCESS != ompi_osc_fabric_runs_of(target_dt, target_count, &l->runs)) return false;
    const bool small = l->runs.bytes == bytes &&
                       ((l->runs.pieces > 1 && bytes / l->runs.pieces <= OSCF_PACKED_PIECE_MAX) ||
                        (!origin_one && ompi_osc_fabric_small_pieces(origin_dt, origin_count, bytes,
                                                                     OSCF_PACKED_PIECE_MAX)) ||
                        (!result_one && ompi_osc_fabric_small_pieces(result_dt, result_count, bytes,
                                                                     OSCF_PACKED_PIECE_MAX)));
    if (!small) {
        ompi_osc_fabric_runs_free(&l->runs);
        return false;
    }
    if (!pair_layout(l, tt)) return false;
    layout_fill(l, target, target_disp, tt, origin_addr, origin_count, origin_dt);
    f->result_addr = result_addr;
    f->result_count = result_count;
    f->result_dt = result_dt;
    return true;
}

/* count elements of dt (plain_type t) reduced by o at a peer the engine left open
 * (direct_view.h): false means nothing was done. MPI_BYTE takes only the bitwise ops. */
static bool direct_one(oscf_direct_view *direct, const void *origin_addr, void *result_addr, int target,
                       ptrdiff_t target_disp, int count, const ompi_datatype_t *dt, oscf_type t, oscf_op o)
{
    if ((MPI_Datatype)dt == MPI_BYTE && !byte_op_allowed(o)) return false;
    return oscf_direct_accumulate(direct, target, target_disp, 0, OSCF_OP_NO_OP == o ? NULL : origin_addr,
                                  result_addr, (size_t)count, t, o);
}

/* The one-type call (one_type_call) to a peer the engine left open (direct_view.h):
 * false means nothing was done and the call is translated in full. */
static bool direct_simple(oscf_direct_view *direct, const void *origin_addr, int origin_count,
                          ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                          ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp, int target_count,
                          ompi_datatype_t *target_dt, ompi_op_t *op)
{
    oscf_op o;
    oscf_type t;
    return one_type_call(origin_count, origin_dt, result_count, result_dt, target_count, target_dt, op, &t,
                         &o) &&
           direct_one(direct, origin_addr, NULL == result_dt ? NULL : result_addr, target, target_disp,
                      target_count, target_dt, t, o);
}

/* A derived-datatype accumulate to a peer whose window memory we map: the engine
 * applies each stretch contiguous on every side as the convertors give it, so the call
 * costs its elements' updates and no list of thousands of segments (as puts and gets
 * copy between the two layouts at once, osc_fabric_comm.c). */
typedef struct acc_walk {
    /* The call, for the general translation when the engine does not serve it. */
    const void *origin_addr;
    int origin_count, result_count, target_count;
    ompi_datatype_t *origin_dt, *result_dt, *target_dt;
    void *result_addr;
    ompi_op_t *mpi_op;
    struct ompi_win_t *win;
    int target;
    ptrdiff_t target_disp;
    oscf_type type;
    oscf_op op;
    ptrdiff_t span_lo;
    size_t span_len;
    /* Target (offsets from 0), origin unless NO_OP, result when fetching. */
    ompi_osc_fabric_stream s[3];
    int nsides, origin_side, result_side, started;
    unsigned unit_shift; /* log2 of the type's size */
    size_t unit_mask;    /* the type's size less 1 */
} acc_walk;

enum { kWalkChunk = 64 * 1024 }; /* an L2-sized copy of the origin at a time */

static int walk_start(acc_walk *w)
{
    const struct {
        ompi_datatype_t *dt;
        int count;
        const void *base;
        int *slot;
    } side[3] = {
        {w->target_dt, w->target_count, NULL, NULL},
        {OSCF_OP_NO_OP == w->op ? NULL : w->origin_dt, w->origin_count, w->origin_addr, &w->origin_side},
        {w->result_dt, w->result_count, w->result_addr, &w->result_side},
    };
    for (int i = 0; i < 3; i++) {
        if (NULL == side[i].dt) continue;
        /* The origin is only read: packed into chunks, it costs one convertor call per
         * chunk instead of a piece of its own layout cutting every segment. */
        const bool pack = 1 == i && !ompi_datatype_is_contiguous_memory_layout(side[i].dt, side[i].count);
        const size_t bytes = data_bytes(side[i].dt, side[i].count);
        int rc =
            pack ? ompi_osc_fabric_stream_init_packed(&w->s[w->started], side[i].dt, side[i].count,
                                                      side[i].base, bytes < kWalkChunk ? bytes : kWalkChunk)
                 : ompi_osc_fabric_stream_init(&w->s[w->started], side[i].dt, side[i].count, side[i].base);
        w->started++; /* finished even when its preparation failed */
        if (OPAL_SUCCESS != rc) return OSCF_ERR_INTERNAL;
        if (side[i].slot) *side[i].slot = w->started - 1;
    }
    return OSCF_OK;
}

/* oscf_acc_source's next: the longest stretch contiguous on every side. */
static int walk_next(void *arg, oscf_acc_segment *seg)
{
    acc_walk *w = arg;
    if (0 == w->started) {
        int rc = walk_start(w);
        if (OSCF_OK != rc) return rc;
    }
    size_t step = SIZE_MAX;
    for (int i = 0; i < w->nsides; i++) {
        const int more = ompi_osc_fabric_stream_fill(&w->s[i]);
        if (more < 0) return OSCF_ERR_INTERNAL;
        if (0 == more) return 0; /* the sides hold the same bytes: all end together */
        if (w->s[i].left < step) step = w->s[i].left;
    }
    if (step & w->unit_mask) { /* every single-value type's size is a power of 2 */
        LOG("a datatype splits an element (%zu-byte piece)", step);
        return OSCF_ERR_TYPE;
    }
    *seg = (oscf_acc_segment){
        .origin = w->origin_side < 0 ? NULL : w->s[w->origin_side].at,
        .result = w->result_side < 0 ? NULL : w->s[w->result_side].at,
        .target_offset = (int64_t)(intptr_t)w->s[0].at,
        .count = step >> w->unit_shift,
    };
    for (int i = 0; i < w->nsides; i++) {
        w->s[i].at += step;
        w->s[i].left -= step;
    }
    return 1;
}

static int run_walk(void *arg, const oscf_notify *notify)
{
    acc_walk *w = arg;
    const oscf_acc_source src = {.next = walk_next, .arg = w};
    int served = 0;
    int rc =
        oscf_win_accumulate_direct(ompi_osc_fabric_win(w->win), w->target, w->type, w->op, w->target_disp,
                                   w->span_lo, w->span_len, NULL != w->result_dt, &src, notify, &served);
    for (int i = 0; i < w->started; i++) ompi_osc_fabric_stream_fini(&w->s[i]);
    if (served) return ompi_osc_fabric_status(rc);
    /* Not a peer whose updates of this type we apply (native atomics carry the type). */
    acc_args a;
    rc = prepare(&a, w->origin_addr, w->origin_count, w->origin_dt, w->result_addr, w->result_count,
                 w->result_dt, w->target, w->target_disp, w->target_count, w->target_dt, w->mpi_op, w->win);
    if (OMPI_SUCCESS != rc) return rc;
    rc = run(&a, notify);
    release(&a);
    return rc;
}

static bool same_bytes(ompi_datatype_t *dt, int count, oscf_type t, size_t bytes)
{
    oscf_type st;
    return OMPI_SUCCESS == ompi_osc_fabric_element_type(dt, &st) && st == t && data_bytes(dt, count) == bytes;
}

/* Fills w and returns true when the call can be walked: a derived datatype on some
 * side, all built from one single-value type (pair types keep the general path, which
 * regroups their holes), the same bytes on every side, to a peer whose memory we map.
 * Anything else, errors included, goes to the general path, which reports them. */
static bool walk_wanted(acc_walk *w, oscf_direct_view *direct, const void *origin_addr, int origin_count,
                        ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                        ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp, int target_count,
                        ompi_datatype_t *target_dt, ompi_op_t *op, struct ompi_win_t *win)
{
    if (NULL == direct || !oscf_direct_mapped(direct, target) ||
        OMPI_SUCCESS != ompi_osc_fabric_map_op(op, &w->op) ||
        OMPI_SUCCESS != ompi_osc_fabric_element_type(target_dt, &w->type) || w->type >= OSCF_TYPE_FLOAT_INT ||
        OMPI_SUCCESS != check_byte_op(target_dt, w->op) ||
        !ompi_osc_fabric_span(target_dt, target_count, &w->span_lo, &w->span_len))
        return false;
    const size_t bytes = data_bytes(target_dt, target_count);
    const bool with_origin = OSCF_OP_NO_OP != w->op;
    if ((with_origin && !same_bytes(origin_dt, origin_count, w->type, bytes)) ||
        (NULL != result_dt && !same_bytes(result_dt, result_count, w->type, bytes)))
        return false;
    /* One block on every side is one segment: the general path's shortest road. */
    if (ompi_datatype_is_contiguous_memory_layout(target_dt, target_count) &&
        (!with_origin || ompi_datatype_is_contiguous_memory_layout(origin_dt, origin_count)) &&
        (NULL == result_dt || ompi_datatype_is_contiguous_memory_layout(result_dt, result_count)))
        return false;
    *w = (acc_walk){.origin_addr = origin_addr,
                    .origin_count = origin_count,
                    .result_count = result_count,
                    .target_count = target_count,
                    .origin_dt = origin_dt,
                    .result_dt = result_dt,
                    .target_dt = target_dt,
                    .result_addr = result_addr,
                    .mpi_op = op,
                    .win = win,
                    .target = target,
                    .target_disp = target_disp,
                    .type = w->type,
                    .op = w->op,
                    .span_lo = w->span_lo,
                    .span_len = w->span_len,
                    .nsides = 1 + with_origin + (NULL != result_dt),
                    .origin_side = -1,
                    .result_side = -1,
                    .unit_shift = (unsigned)__builtin_ctzl(oscf_type_size(w->type)),
                    .unit_mask = oscf_type_size(w->type) - 1};
    return true;
}

/* prepare, run (directly or as a request), release. */
static int accumulate(const void *origin_addr, int origin_count, ompi_datatype_t *origin_dt,
                      void *result_addr, int result_count, ompi_datatype_t *result_dt, int target,
                      ptrdiff_t target_disp, int target_count, ompi_datatype_t *target_dt, ompi_op_t *op,
                      struct ompi_win_t *win, struct ompi_request_t **request)
{
    acc_args a;
    if (MPI_PROC_NULL == target && NULL == request) return OMPI_SUCCESS;
    oscf_direct_view *direct = ompi_osc_fabric_direct(win);
    if (NULL == request && NULL != direct &&
        direct_simple(direct, origin_addr, origin_count, origin_dt, result_addr, result_count, result_dt,
                      target, target_disp, target_count, target_dt, op))
        return OMPI_SUCCESS;
    if (moves_nothing(origin_count, origin_dt, result_count, result_dt, target_count, target_dt, op)) {
        a = (acc_args){.win = ompi_osc_fabric_win(win),
                       .target = target,
                       .type = OSCF_TYPE_UINT8,
                       .op = OSCF_OP_NO_OP,
                       .target_disp = target_disp,
                       .n = 0};
        a.segs = a.inline_segs;
        return NULL == request ? run(&a, NULL) : ompi_osc_fabric_request_start(win, target, run, &a, request);
    }
    acc_walk w;
    if (walk_wanted(&w, direct, origin_addr, origin_count, origin_dt, result_addr, result_count, result_dt,
                    target, target_disp, target_count, target_dt, op, win))
        return NULL == request ? run_walk(&w, NULL)
                               : ompi_osc_fabric_request_start(win, target, run_walk, &w, request);
    fetch_layout f;
    if (NULL != result_dt &&
        fetch_layout_wanted(&f, origin_addr, origin_count, origin_dt, result_addr, result_count, result_dt,
                            target, target_disp, target_count, target_dt, op, win)) {
        int rc = NULL == request ? run_fetch_layout(&f, NULL)
                                 : ompi_osc_fabric_request_start(win, target, run_fetch_layout, &f, request);
        ompi_osc_fabric_runs_free(&f.l.runs);
        return rc;
    }
    acc_layout l;
    if (NULL == result_dt &&
        !(ompi_datatype_is_predefined(origin_dt) && ompi_datatype_is_predefined(target_dt)) &&
        layout_wanted(&l, origin_addr, origin_count, origin_dt, target, target_disp, target_count, target_dt,
                      op, win)) {
        int rc = NULL == request ? run_layout(&l, NULL)
                                 : ompi_osc_fabric_request_start(win, target, run_layout, &l, request);
        ompi_osc_fabric_runs_free(&l.runs);
        return rc;
    }
    int rc = prepare(&a, origin_addr, origin_count, origin_dt, result_addr, result_count, result_dt, target,
                     target_disp, target_count, target_dt, op, win);
    if (OMPI_SUCCESS != rc) return rc;
    if (1 == a.n && NULL == request && NULL != direct &&
        oscf_direct_accumulate(direct, target, target_disp, a.segs[0].target_offset, a.segs[0].origin,
                               a.segs[0].result, a.segs[0].count, a.type, a.op))
        return OMPI_SUCCESS;
    rc = NULL == request ? run(&a, NULL) : ompi_osc_fabric_request_start(win, target, run, &a, request);
    release(&a);
    return rc;
}

int ompi_osc_fabric_accumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                               int target, ptrdiff_t target_disp, int target_count,
                               struct ompi_datatype_t *target_dt, struct ompi_op_t *op,
                               struct ompi_win_t *win)
{
    return accumulate(origin_addr, origin_count, origin_dt, NULL, 0, NULL, target, target_disp, target_count,
                      target_dt, op, win, NULL);
}

int ompi_osc_fabric_get_accumulate(const void *origin_addr, int origin_count,
                                   struct ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                                   struct ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp,
                                   int target_count, struct ompi_datatype_t *target_dt, struct ompi_op_t *op,
                                   struct ompi_win_t *win)
{
    return accumulate(origin_addr, origin_count, origin_dt, result_addr, result_count, result_dt, target,
                      target_disp, target_count, target_dt, op, win, NULL);
}

int ompi_osc_fabric_raccumulate(const void *origin_addr, int origin_count, struct ompi_datatype_t *origin_dt,
                                int target, ptrdiff_t target_disp, int target_count,
                                struct ompi_datatype_t *target_dt, struct ompi_op_t *op,
                                struct ompi_win_t *win, struct ompi_request_t **request)
{
    return accumulate(origin_addr, origin_count, origin_dt, NULL, 0, NULL, target, target_disp, target_count,
                      target_dt, op, win, request);
}

int ompi_osc_fabric_rget_accumulate(const void *origin_addr, int origin_count,
                                    struct ompi_datatype_t *origin_dt, void *result_addr, int result_count,
                                    struct ompi_datatype_t *result_dt, int target, ptrdiff_t target_disp,
                                    int target_count, struct ompi_datatype_t *target_dt, struct ompi_op_t *op,
                                    struct ompi_win_t *win, struct ompi_request_t **request)
{
    return accumulate(origin_addr, origin_count, origin_dt, result_addr, result_count, result_dt, target,
                      target_disp, target_count, target_dt, op, win, request);
}

int ompi_osc_fabric_fetch_and_op(const void *origin_addr, void *result_addr, struct ompi_datatype_t *dt,
                                 int target, ptrdiff_t target_disp, struct ompi_op_t *op,
                                 struct ompi_win_t *win)
{
    if (!ompi_datatype_is_predefined(dt)) {
        LOG("MPI_Fetch_and_op needs a predefined datatype (got %s)", dt->name);
        return MPI_ERR_TYPE;
    }
    /* One element of one type: the fast road without accumulate()'s questions about
     * three sides, which an 8-byte fetch-and-op to an on-node peer notices. */
    oscf_direct_view *direct = ompi_osc_fabric_direct(win);
    oscf_type t;
    oscf_op o;
    if (NULL != direct && op_of(op, &o) && plain_type(dt, &t) &&
        direct_one(direct, origin_addr, result_addr, target, target_disp, 1, dt, t, o))
        return OMPI_SUCCESS;
    return accumulate(origin_addr, 1, dt, result_addr, 1, dt, target, target_disp, 1, dt, op, win, NULL);
}

int ompi_osc_fabric_compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                                     struct ompi_datatype_t *dt, int target, ptrdiff_t target_disp,
                                     struct ompi_win_t *win)
{
    oscf_type type;
    if (MPI_PROC_NULL == target) return OMPI_SUCCESS;
    if (!ompi_datatype_is_predefined(dt)) {
        LOG("MPI_Compare_and_swap needs a single predefined element");
        return MPI_ERR_TYPE;
    }
    int rc = ompi_osc_fabric_map_type(dt, &type);
    if (OMPI_SUCCESS != rc) return rc;
    if (dt->super.size != oscf_type_size(type)) {
        LOG("MPI_Compare_and_swap needs a single predefined element");
        return MPI_ERR_TYPE;
    }
    oscf_direct_view *direct = ompi_osc_fabric_direct(win);
    if (NULL != direct && oscf_direct_compare_and_swap(direct, target, target_disp, origin_addr, compare_addr,
                                                       result_addr, type))
        return OMPI_SUCCESS;
    return ompi_osc_fabric_status(oscf_win_compare_and_swap(ompi_osc_fabric_win(win), target, origin_addr,
                                                            compare_addr, result_addr, type, target_disp, 0));
}
