// Control programs: a tree of ProgNodes the Engine compiles into its execution plan.
#include "state.hpp"

namespace poplar {
namespace program {
using poplar_host::ProgKind;
using poplar_host::ProgNode;

static std::shared_ptr<ProgNode> node(ProgKind k, const DebugContext &dc) {
  auto n = std::make_shared<ProgNode>();
  n->kind = k;
  n->name = dc.getPathName();
  return n;
}

bool Program::isEmpty() const { return !n_ || (n_->kind == ProgKind::Sequence && n_->children.empty()); }

Sequence::Sequence(const DebugContext &dc) { n_ = node(ProgKind::Sequence, dc); }
Sequence::Sequence(std::initializer_list<Program> programs, const DebugContext &dc) {
  n_ = node(ProgKind::Sequence, dc);
  for (const auto &p : programs)
    add(p);
}
void Sequence::add(const Program &p) {
  if (p.hostNode())
    n_->children.push_back(p);
}

Execute::Execute(ComputeSet cs, const DebugContext &dc) {
  n_ = node(ProgKind::Execute, dc);
  n_->cs = cs.getId();
}

Copy::Copy(Tensor src, Tensor dst, bool, const DebugContext &dc) {
  n_ = node(ProgKind::Copy, dc);
  n_->a = std::move(src);
  n_->b = std::move(dst);
}

Copy::Copy(const DataStream &stream, Tensor dst, bool, const DebugContext &dc) {
  n_ = node(ProgKind::StreamCopy, dc);
  n_->stream = stream;
  n_->b = std::move(dst);
}

Copy::Copy(Tensor src, const DataStream &stream, bool, const DebugContext &dc) {
  n_ = node(ProgKind::StreamCopy, dc);
  n_->stream = stream;
  n_->a = std::move(src);
}

PrintTensor::PrintTensor(Tensor t, const DebugContext &dc) : PrintTensor(StringRef(), std::move(t), dc) {}

PrintTensor::PrintTensor(StringRef title, Tensor t, const DebugContext &dc) {
  n_ = node(ProgKind::PrintTensor, dc);
  n_->name = title.str();
  n_->a = std::move(t);
}

Repeat::Repeat(unsigned count, const Program &prog, const DebugContext &dc) {
  n_ = node(ProgKind::Repeat, dc);
  n_->count = count;
  n_->children.push_back(prog);
}

RepeatWhileTrue::RepeatWhileTrue(const Program &cond, Tensor predicate, const Program &body, const DebugContext &dc) {
  n_ = node(ProgKind::RepeatWhileTrue, dc);
  n_->children = {cond, body};
  n_->a = std::move(predicate);
}

Sync::Sync(SyncType, const DebugContext &dc) { n_ = node(ProgKind::Sync, dc); }

} // namespace program
} // namespace poplar
