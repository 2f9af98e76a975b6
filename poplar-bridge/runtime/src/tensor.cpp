// Tensor views: every view is a list of variable element runs in row-major order.
#include "state.hpp"
#include <numeric>
#include <poplar/exceptions.hpp>
#include <sstream>

namespace poplar_host {
namespace {

std::size_t product(const std::vector<std::size_t> &s, std::size_t b, std::size_t e) {
  std::size_t p = 1;
  for (std::size_t i = b; i < e; ++i)
    p *= s[i];
  return p;
}

void appendSeg(std::vector<Segment> &out, Segment s) {
  if (s.begin == s.end)
    return;
  if (!out.empty() && out.back().var == s.var && out.back().end == s.begin)
    out.back().end = s.end;
  else
    out.push_back(s);
}

// Appends the view elements [lo, hi) of segs; `cursor` remembers where the last call ended
// (calls come in ascending lo) so slicing every row of a big tensor stays linear.
struct Walker {
  const std::vector<Segment> &segs;
  std::size_t idx = 0, base = 0; // segs[idx] starts at view index base
  void take(std::size_t lo, std::size_t hi, std::vector<Segment> &out) {
    while (idx < segs.size() && base + (segs[idx].end - segs[idx].begin) <= lo) {
      base += segs[idx].end - segs[idx].begin;
      ++idx;
    }
    std::size_t i = idx, b = base;
    while (lo < hi && i < segs.size()) {
      const auto &s = segs[i];
      const std::size_t len = s.end - s.begin;
      const std::size_t from = lo - b, to = std::min(len, hi - b);
      appendSeg(out, {s.var, s.begin + from, s.begin + to});
      lo = b + to;
      if (to == len) {
        b += len;
        ++i;
      }
    }
  }
};

std::shared_ptr<TensorData> derive(const TensorData &d) {
  auto r = std::make_shared<TensorData>();
  r->graph = d.graph;
  r->type = d.type;
  return r;
}

} // namespace
} // namespace poplar_host

namespace poplar {
using namespace poplar_host;

const TensorData &Tensor::hostData() const {
  if (!d_)
    throw poplar_error("use of an invalid (default-constructed) Tensor");
  return *d_;
}

std::size_t Tensor::numElements() const {
  const auto &s = hostData().shape;
  return product(s, 0, s.size());
}
std::size_t Tensor::dim(unsigned i) const {
  const auto &s = hostData().shape;
  if (i >= s.size())
    throw poplar_error("Tensor::dim(" + std::to_string(i) + ") on a rank-" + std::to_string(s.size()) + " tensor '" +
                       getDebugStr() + "'");
  return s[i];
}
std::vector<std::size_t> Tensor::shape() const { return hostData().shape; }
unsigned Tensor::rank() const { return static_cast<unsigned>(hostData().shape.size()); }
Type Tensor::elementType() const { return hostData().type; }

Tensor Tensor::slice(std::size_t begin, std::size_t end, unsigned dimension) const {
  const auto &d = hostData();
  if (dimension >= d.shape.size() || begin > end || end > d.shape[dimension])
    throw poplar_error("Tensor::slice(" + std::to_string(begin) + ", " + std::to_string(end) + ", dim " +
                       std::to_string(dimension) + ") out of range for tensor '" + getDebugStr() + "'");
  auto r = derive(d);
  r->shape = d.shape;
  r->shape[dimension] = end - begin;
  const std::size_t outer = product(d.shape, 0, dimension), inner = product(d.shape, dimension + 1, d.shape.size());
  const std::size_t row = d.shape[dimension] * inner;
  Walker w{d.segs};
  for (std::size_t o = 0; o < outer; ++o)
    w.take(o * row + begin * inner, o * row + end * inner, r->segs);
  return Tensor(r);
}

Tensor Tensor::slice(ArrayRef<std::size_t> begin, ArrayRef<std::size_t> end) const {
  const auto &d = hostData();
  if (begin.size() != d.shape.size() || end.size() != d.shape.size())
    throw poplar_error("Tensor::slice: " + std::to_string(begin.size()) + " begin and " + std::to_string(end.size()) +
                       " end indices for rank-" + std::to_string(d.shape.size()) + " tensor '" + getDebugStr() + "'");
  Tensor r = *this;
  for (unsigned k = 0; k < d.shape.size(); ++k)
    r = r.slice(begin[k], end[k], k);
  return r;
}

bool Tensor::isContiguous() const { return hostData().segs.size() <= 1; }

Tensor Tensor::operator[](std::size_t i) const {
  const auto &d = hostData();
  if (d.shape.empty())
    throw poplar_error("Tensor::operator[] on scalar tensor '" + getDebugStr() + "'");
  Tensor s = slice(i, i + 1, 0);
  std::vector<std::size_t> sh(d.shape.begin() + 1, d.shape.end());
  return s.reshape(sh);
}

Tensor Tensor::reshape(ArrayRef<std::size_t> shape) const {
  const auto &d = hostData();
  std::vector<std::size_t> sh = shape.vec();
  if (product(sh, 0, sh.size()) != numElements())
    throw poplar_error("Tensor::reshape: " + std::to_string(product(sh, 0, sh.size())) + " elements requested for '" +
                       getDebugStr() + "' with " + std::to_string(numElements()));
  auto r = derive(d);
  r->shape = std::move(sh);
  r->segs = d.segs;
  return Tensor(r);
}

Tensor Tensor::flatten() const { return reshape({numElements()}); }

Tensor Tensor::flatten(unsigned dimBegin, unsigned dimEnd) const {
  auto sh = hostData().shape;
  if (dimBegin >= dimEnd || dimEnd > sh.size())
    throw poplar_error("Tensor::flatten(" + std::to_string(dimBegin) + ", " + std::to_string(dimEnd) +
                       ") out of range for '" + getDebugStr() + "'");
  std::vector<std::size_t> r(sh.begin(), sh.begin() + dimBegin);
  r.push_back(product(sh, dimBegin, dimEnd));
  r.insert(r.end(), sh.begin() + dimEnd, sh.end());
  return reshape(r);
}

std::string Tensor::getDebugStr() const {
  if (!d_)
    return "<invalid>";
  std::vector<std::uint32_t> vars;
  for (const auto &s : d_->segs)
    if (vars.empty() || vars.back() != s.var)
      vars.push_back(s.var);
  if (vars.empty())
    return "<empty>";
  std::ostringstream o;
  o << d_->graph->vars[vars[0]].name;
  if (vars.size() > 1)
    o << " (+" << (vars.size() - 1) << " more)";
  return o.str();
}

Tensor concat(ArrayRef<Tensor> ts, unsigned dimension) {
  if (ts.empty())
    throw poplar_error("concat of no tensors");
  const auto &d0 = ts[0].hostData();
  std::vector<std::size_t> shape = d0.shape;
  if (dimension >= shape.size())
    throw poplar_error("concat: dimension " + std::to_string(dimension) + " out of range for '" + ts[0].getDebugStr() +
                       "'");
  shape[dimension] = 0;
  for (const Tensor &t : ts) {
    const auto &d = t.hostData();
    bool ok = d.graph == d0.graph && d.type == d0.type && d.shape.size() == d0.shape.size();
    for (std::size_t i = 0; ok && i < d.shape.size(); ++i)
      ok = i == dimension || d.shape[i] == d0.shape[i];
    if (!ok)
      throw poplar_error("concat: tensor '" + t.getDebugStr() + "' does not match '" + ts[0].getDebugStr() +
                         "' in graph, type or shape outside dimension " + std::to_string(dimension));
    shape[dimension] += d.shape[dimension];
  }
  auto r = derive(d0);
  r->shape = shape;
  const std::size_t outer = product(shape, 0, dimension);
  std::vector<Walker> ws;
  std::vector<std::size_t> rows;
  for (const Tensor &t : ts) {
    ws.push_back(Walker{t.hostData().segs});
    rows.push_back(product(t.hostData().shape, dimension, shape.size()));
  }
  for (std::size_t o = 0; o < outer; ++o)
    for (std::size_t k = 0; k < ts.size(); ++k)
      ws[k].take(o * rows[k], (o + 1) * rows[k], r->segs);
  return Tensor(r);
}

Tensor concat(const Tensor &first, const Tensor &second, unsigned dimension) {
  return concat(std::vector<Tensor>{first, second}, dimension);
}

} // namespace poplar
