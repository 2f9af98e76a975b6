// Host runtime of the Poplar API subset: poplar::Tensor, a view (slice, reshape,
// concat...) over the elements of one or more graph variables.
#ifndef POPLAR_TENSOR_HPP
#define POPLAR_TENSOR_HPP
#include <cstddef>
#include <cstdint>
#include <memory>
#include <poplar/ArrayRef.hpp>
#include <poplar/Type.hpp>
#include <string>
#include <vector>

namespace poplar_host {
struct GraphState;
// Elements [begin, end) of variable `var`, in view order.
struct Segment {
  std::uint32_t var;
  std::size_t begin, end;
};
struct TensorData {
  const GraphState *graph = nullptr;
  poplar::Type type;
  std::vector<std::size_t> shape;
  std::vector<Segment> segs; // adjacent runs of one variable are merged
};
} // namespace poplar_host

namespace poplar {

class Tensor {
public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<const poplar_host::TensorData> d) : d_(std::move(d)) {}

  Tensor slice(std::size_t begin, std::size_t end, unsigned dimension = 0) const;
  // Elements [begin[d], end[d]) along every dimension d.
  Tensor slice(ArrayRef<std::size_t> begin, ArrayRef<std::size_t> end) const;
  Tensor operator[](std::size_t i) const;
  Tensor reshape(ArrayRef<std::size_t> shape) const;
  Tensor flatten() const;
  Tensor flatten(unsigned dimBegin, unsigned dimEnd) const;
  std::size_t numElements() const;
  std::size_t dim(unsigned i) const;
  std::vector<std::size_t> shape() const;
  unsigned rank() const;
  Type elementType() const;
  bool valid() const { return d_ != nullptr; }
  // Whether the view is one run of consecutive elements of one variable.
  bool isContiguous() const;
  // A name for messages: the debug names of the variables the view covers.
  std::string getDebugStr() const;

  const poplar_host::TensorData &hostData() const; // host runtime only

private:
  std::shared_ptr<const poplar_host::TensorData> d_;
};

Tensor concat(ArrayRef<Tensor> ts, unsigned dimension = 0);
Tensor concat(const Tensor &first, const Tensor &second, unsigned dimension = 0);

} // namespace poplar
#endif
