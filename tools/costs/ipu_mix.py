#!/usr/bin/env python3
"""Translate measured x86-64 instructions into IPU worker instructions (thread cycles).

  ipu_mix.py BINARY CALLGRIND.out [--top N]

CALLGRIND.out: callgrind with --dump-instr=yes --compress-strings=no of the replay
harness BINARY (linked -no-pie, so addresses match `objdump -d`), collecting only the
vertex runs (--toggle-collect='*runOne*'). Every executed x86 instruction is weighted by
what the IPU's tile ISA needs for it, from public facts (see notes/issue21-research.md):

- a load-store RISC: an x86 arithmetic instruction with a memory operand is a load plus
  the operation (2); a scaled index in an address costs a shift (+1); 16- and 8-bit
  stores are read-modify-write (ld32, insert, st32: 3) -- the tile has no sub-word store;
- f32 compare results live in the AUX register file and must be moved before a branch
  (f32cmp, atom, br: comparisons 2);
- no conditional move in compiled code (cmov: 2);
- f32div 1-3 cycles (3), f32 sqrt ~5 (popops SQRT FLOAT 10 per 2), integer divide is a
  library call (40; popops DIVIDE UNSIGNED_INT 265 per element incl. its loop);
- expf and logf are single instructions f32exp (~3 with setup) and f32ln (~6), so the
  glibc bodies are replaced by those;
- half <-> float conversions are single instructions (vcvt*ph* 1, the portable C
  conversion's code counted as it is);
- 16-byte SSE moves are two 64-bit loads/stores (2); pointers and size_t are 32 bits
  on the tile, so 64-bit integer arithmetic costs the same as 32-bit.
No dual issue is assumed: compiled C++ codelets rarely pair a MAIN and an AUX
instruction (Jia et al. 2019 measured compiler-generated loops at about a quarter of
hand-written assembly's memory throughput).
"""
import re
import subprocess
import sys
from collections import defaultdict

LIBM = {"expf": 3, "logf": 6, "__expf_fma": 3, "__logf_fma": 6, "__expf": 3, "__logf": 6, "__ieee754_expf": 3}
ARITH_NO_LOAD = {"mov", "movl", "movq", "movzwl", "movzbl", "movzwq", "movzbq", "movswl", "movsbl", "movslq", "movss",
                 "vmovss", "movsd", "vmovsd", "movd", "vmovd", "movw", "movb", "lea", "push", "pop", "call", "jmp",
                 "nop", "nopw", "nopl", "endbr64", "movups", "movaps", "vmovups", "vmovaps", "movdqu", "movdqa",
                 "vmovdqu", "vmovdqa", "movabs", "prefetcht0", "cs", "data16", "xchg"}


def objdump(binary):
    """address -> (function, mnemonic, operands)."""
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", binary], capture_output=True, text=True,
                         check=True).stdout
    code, fn = {}, None
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
        if m:
            fn = m.group(2)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m:
            code[int(m.group(1), 16)] = (fn, m.group(2), m.group(3))
    return code


def executed(path):
    """address -> [instructions executed (self cost), function], from a dump made with
    --dump-instr=yes --dump-line=no --compress-pos=no --compress-strings=no."""
    counts = {}
    skip = False
    fn = None
    with open(path) as f:
        for line in f:
            if line.startswith("fn="):
                fn = line[3:].strip()
                continue
            if line.startswith("calls="):
                skip = True
                continue
            if not line.startswith("0x"):
                continue
            if skip:  # the inclusive cost of the call on the line after calls=
                skip = False
                continue
            addr, cost = line.split()[:2]
            e = counts.setdefault(int(addr, 16), [0, fn])
            e[0] += int(cost)
    return counts


def weight(fn, mn, ops, nxt):
    """IPU instructions (thread cycles) for one executed x86 instruction."""
    base = mn.split(".")[0]
    fname = fn.split("@")[0] if fn else ""
    if fname in LIBM or fname.startswith("__expf") or fname.startswith("__logf"):
        return 0.0  # replaced by the IPU instruction at the call
    if fn and "@plt" in fn:
        return 0.0
    if base == "call":
        for name, cost in LIBM.items():
            if f"<{name}" in ops:
                return cost
        return 1.0
    if base.startswith("nop") or base in ("endbr64",):
        return 0.0
    mem = "(" in ops
    w = 1.0
    if base in ("div", "idiv", "divl", "divq", "idivl", "idivq"):
        return 40.0
    if base in ("divss", "vdivss", "divps", "vdivps"):
        w = 3.0
    elif base in ("sqrtss", "vsqrtss"):
        w = 5.0
    elif base.startswith("cmov"):
        w = 2.0
    elif base in ("ucomiss", "vucomiss", "comiss", "vcomiss"):
        w = 2.0
    elif base in ("movdqu", "movdqa", "vmovdqu", "vmovdqa", "movups", "movaps", "vmovups", "vmovaps") and mem:
        w = 2.0  # 16 bytes: two 64-bit loads or stores
    if mem and base not in ARITH_NO_LOAD and not base.startswith("j") and not base.startswith("set"):
        # store-form arithmetic (add %r,(mem)) is load+op+store; load-form load+op
        dst_mem = ops.split(",")[-1].strip().endswith(")")
        w += 2.0 if dst_mem else 1.0
    if mem and re.search(r",(2|4|8)\)", ops):
        w += 1.0  # scaled index: a shift before the load
    # sub-word stores: read-modify-write on the tile
    if mem and ops.split(",")[-1].strip().endswith(")"):
        if base in ("movw", "movb") or (base == "mov" and re.match(r"%[a-d][xl],|%[sd]il?,|%r\d+[wb],|%[a-d]h,", ops)) \
                or base in ("vpextrw", "pextrw"):
            w += 2.0
    return w


def main():
    binary, cg = sys.argv[1], sys.argv[2]
    code = objdump(binary)
    counts = executed(cg)
    addrs = sorted(code)
    nxt = {a: code[b] for a, b in zip(addrs, addrs[1:])}
    x86 = ipu = 0.0
    by_fn = defaultdict(lambda: [0, 0.0])
    by_class = defaultdict(lambda: [0, 0.0])
    missing = 0
    for a, (c, cgfn) in counts.items():
        if a not in code:
            # shared libraries: libm's expf/logf are one IPU instruction each (charged at
            # the call), libc's memcpy/memset a load-store loop of about the same length
            name = (cgfn or "?").split("'")[0]
            w = 0.0 if any(k in name for k in ("expf", "logf")) else 1.0
            missing += c
            x86 += c
            ipu += c * w
            by_fn[name][0] += c
            by_fn[name][1] += c * w
            continue
        fn, mn, ops = code[a]
        w = weight(fn, mn, ops, nxt.get(a))
        x86 += c
        ipu += c * w
        by_fn[fn][0] += c
        by_fn[fn][1] += c * w
        by_class[mn][0] += c
        by_class[mn][1] += c * w
    print(f"x86 instructions {x86:.0f} (in shared libraries {missing}), IPU estimate {ipu:.0f}, ratio {ipu / max(x86, 1):.3f}")
    print("by function (x86, IPU, ratio):")
    for fn, (a, b) in sorted(by_fn.items(), key=lambda kv: -kv[1][0])[:12]:
        print(f"  {a:>12.0f} {b:>12.0f} {b / max(a, 1):6.2f}  {fn[:90]}")
    print("by mnemonic (x86 share, IPU weight):")
    for mn, (a, b) in sorted(by_class.items(), key=lambda kv: -kv[1][0])[:25]:
        print(f"  {mn:<12} {a / max(x86, 1):6.3f} {b / max(a, 1):5.2f}")


if __name__ == "__main__":
    main()
