"""Runs a learner's exercise cell for grading, as a script in a process of its own (never
imported: importing it as ``bertlib.classroom._sandbox`` would load bertlib, whose functions
are the answers). Started by :mod:`bertlib.classroom.grading` with ``python -I -S``: no site
folder, no current folder, no ``.pth`` file (an editable bertlib's among them) is on the path;
only torch's folder is.

An import of bertlib is refused by name (a meta-path finder: a clear verdict). Before the
learner's cell runs, two locks that its code cannot undo: an audit hook refuses to open any
file of bertlib's folder, so no way of importing it or reading its code works (the finder
removed and bertlib's folder put on the path included), and on Linux
(x86-64, aarch64) a seccomp filter makes ``execve`` fail, so no new program starts from here: no
``subprocess``, ``os.system``, or process pool whose workers could import bertlib (a fork
without exec keeps both locks).

Reads one line of JSON from stdin: ``paths`` (the folders to import from), ``bertlib`` (its
folder, locked), ``source`` (the
cell), ``name`` (the function to call), ``cases`` (each a list of arguments, encoded as
:func:`decode` reads them) and ``handouts`` (the bertlib functions the exercise hands out, such
as 05's ``get_next_sentence``: each is a stand-in that asks the grader to run bertlib's, one
line of JSON out and one back, a generator's state going both ways). Writes one line of JSON:
``results`` (each case's result encoded from plain values only, or ``{"__raised__": ...}``),
or ``error`` and ``kind`` (``bertlib``, ``no_function``, ``crashed``). Nothing here compares;
the expected values live in the grader's process, never here."""

import ctypes
import json
import os
import platform
import struct
import sys

REFUSED = "bertlib is not available while grading"
# seccomp: the architecture's audit number and its execve and execveat system calls.
SYSCALLS = {"x86_64": (0xC000003E, 59, 322), "aarch64": (0xC00000B7, 221, 281)}


def refuse_folder(folder: str):
    """An audit hook (it cannot be removed): no file under ``folder`` is opened, so neither
    an import nor a read of bertlib's code gets past it. This script is the one exception (a
    warning's traceback reads its lines; it holds no answer)."""
    inside, itself = os.path.realpath(folder) + os.sep, os.path.realpath(__file__)

    def hook(event: str, args: tuple) -> None:
        if event == "open" and isinstance(args[0], (str, bytes)):
            path = os.path.realpath(os.fsdecode(args[0]))
            if path.startswith(inside) and path != itself:
                raise ImportError(REFUSED)
    return hook


def forbid_new_programs() -> bool:
    """A seccomp filter on this process and its children: execve and execveat fail with
    EPERM (and so does every system call of another architecture's numbering). False where
    there is none (not Linux on x86-64 or aarch64)."""
    machine = platform.machine()
    if sys.platform != "linux" or machine not in SYSCALLS:
        return False
    arch, execve, execveat = SYSCALLS[machine]
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, RET|K
    program = [  # (code, jump if true, jump if false, k); jumps count the instructions skipped
        (ld, 0, 0, 4),  # seccomp_data.arch
        (jeq, 0, 5, arch),
        (ld, 0, 0, 0),  # seccomp_data.nr
        (jge, 3, 0, 0x40000000),  # x32 numbering
        (jeq, 2, 0, execve),
        (jeq, 1, 0, execveat),
        (ret, 0, 0, allow),
        (ret, 0, 0, deny),
    ]
    code = b"".join(struct.pack("HBBI", *line) for line in program)
    buffer = ctypes.create_string_buffer(code, len(code))

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Program(len(program), ctypes.addressof(buffer))
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong,
                      ctypes.c_ulong]
    # PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP with SECCOMP_MODE_FILTER.
    if prctl(38, 1, None, 0, 0) or prctl(22, 2, ctypes.addressof(fprog), 0, 0):
        raise OSError(ctypes.get_errno(), "seccomp could not be set")
    return True


def main() -> None:
    stdin, out = sys.stdin, sys.stdout
    request = json.loads(stdin.readline())
    sys.stdout = sys.stderr  # the learner's prints must not mix with the answer
    sys.path[:] = request["paths"]

    class RefuseBertlib:
        """A meta-path finder that refuses bertlib by name, before any other looks for it."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            if name.split(".")[0] == "bertlib":
                raise ImportError(REFUSED)
            return None

    sys.meta_path.insert(0, RefuseBertlib)
    sys.addaudithook(refuse_folder(request["bertlib"]))
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(1)  # process-state: the grading child process of its own, one per cell
    forbid_new_programs()

    def send(message):
        out.write(json.dumps(message) + "\n")
        out.flush()

    class Module(nn.Module):
        """A bertlib module as the learner's function sees it: its attributes, its layers and
        their weights, but not its forward (that is bertlib's answer)."""

        def forward(self, *args, **kwargs):
            raise ImportError(f"{REFUSED}: compute it from the module's layers")

    def module(spec):
        if spec["class"] == "Linear":
            weight, bias = decode(spec["weight"]), decode(spec.get("bias"))
            layer = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None)
            with torch.no_grad():
                layer.weight.copy_(weight)
                if bias is not None:
                    layer.bias.copy_(bias)
            return layer
        made = Module()
        for name, value in spec["attributes"].items():
            setattr(made, name, value)
        for name, child in spec["children"].items():
            setattr(made, name, module(child))
        return made.train(spec["training"])

    def decode(x):
        if isinstance(x, list):
            return [decode(v) for v in x]
        if isinstance(x, dict):
            if "__tensor__" in x:
                return torch.tensor(x["__tensor__"], dtype=getattr(torch, x["dtype"])) \
                    .reshape(x["shape"])
            if "__set__" in x:
                return set(x["__set__"])
            if "__tuple__" in x:
                return tuple(decode(v) for v in x["__tuple__"])
            if "__module__" in x:
                return module(x["__module__"])
        return x

    def encode(x):
        """Plain values only: a subclass of a tensor or a number is named, not run."""
        if type(x) in (int, float, bool, str, type(None)):
            return x
        if type(x) in (list, tuple):
            return [encode(v) for v in x]
        if type(x) in (torch.Tensor, nn.Parameter):
            x = torch.Tensor.detach(x)
            if x.layout != torch.strided or x.is_meta:
                return {"__not_plain__": f"Tensor(layout={x.layout}, meta={x.is_meta})"}
            return {"__tensor__": torch.Tensor.tolist(x), "dtype": str(x.dtype).split(".")[1],
                    "shape": list(x.shape)}
        if type(x) is torch.Generator:
            return {"__generator__": torch.Generator.get_state(x).tolist()}
        return {"__not_plain__": type(x).__qualname__}

    def handout(name):
        """bertlib's ``name``, run by the grader on the learner's arguments."""
        def call(*args, **kwargs):
            send({"call": name, "args": encode(list(args)),
                  "kwargs": {k: encode(v) for k, v in kwargs.items()}})
            reply = json.loads(stdin.readline())
            if "raised" in reply:
                raise (ValueError if reply["raised"] == "ValueError" else TypeError)(
                    reply["message"])
            generators = [a for a in [*args, *kwargs.values()] if type(a) is torch.Generator]
            for g, state in zip(generators, reply["generators"], strict=True):
                g.set_state(torch.tensor(state, dtype=torch.uint8))
            return decode(reply["result"])
        call.__name__ = name
        return call

    def error_text(err):
        try:
            shown = f"{type(err).__name__}: {err}"
        except BaseException:
            shown = type(err).__name__
        return shown[:300]

    namespace = {"__name__": "__exercise__", "torch": torch, "nn": nn, "F": F, "math": math,
                 "IGNORE": -100, **{name: handout(name) for name in request["handouts"]}}
    try:
        exec(compile(request["source"], "<exercise cell>", "exec"), namespace)
    except BaseException as err:
        send({"kind": "bertlib" if REFUSED in str(err) else "crashed",
              "error": error_text(err)})
        return
    function = namespace.get(request["name"])
    if not callable(function):
        send({"kind": "no_function", "error": request["name"]})
        return
    results = []
    for args in request["cases"]:
        try:
            with torch.no_grad():
                results.append(encode(function(*decode(args))))
        except BaseException as err:
            if REFUSED in str(err):
                send({"kind": "bertlib", "error": error_text(err)})
                return
            results.append({"__raised__": type(err).__name__, "message": error_text(err)})
    send({"results": results})


if __name__ == "__main__":
    main()
