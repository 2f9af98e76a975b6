#ifndef POPLAR_VECTORLAYOUT_HPP
#define POPLAR_VECTORLAYOUT_HPP
namespace poplar {
// The host runtime implements SPAN (pointer + size) and ONE_PTR (pointer only: the
// vertex must know the length some other way, so size() does not exist).
enum class VectorLayout { ONE_PTR, SPAN, SCALED_PTR32, SCALED_PTR64, SCALED_PTR128, COMPACT_PTR, COMPACT_DELTAN, DELTANELEMENTS };
}
#endif
