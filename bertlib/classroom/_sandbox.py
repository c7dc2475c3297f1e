"""Runs a learner's exercise cell for grading, as a script in a process of its own (never
imported: importing it as ``bertlib.classroom._sandbox`` would load bertlib, whose functions
are the answers). Started by :mod:`bertlib.classroom.grading` with ``python -I -S``: no site
folder, no current folder, no ``.pth`` file (an editable bertlib's among them) is on the path;
only torch's folder is, and an import of bertlib is refused.

Reads one JSON object from stdin: ``paths`` (the folders to import from), ``source`` (the
cell), ``name`` (the function to call), ``cases`` (each a list of arguments, encoded as
:func:`decode` reads them). Writes one JSON object to stdout: ``results`` (each case's result
encoded from plain values only, or ``{"__raised__": ...}``), or ``error`` and ``kind``
(``bertlib``, ``no_function``, ``crashed``). Nothing here compares; the expected values live in
the grader's process, never here."""

import json
import sys


def main() -> None:
    request = json.loads(sys.stdin.read())
    out = sys.stdout
    sys.stdout = sys.stderr  # the learner's prints must not mix with the answer
    sys.path[:] = request["paths"]

    class RefuseBertlib:
        """A meta-path finder that refuses bertlib, however it is reached."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            if name.split(".")[0] == "bertlib" or name.startswith("__editable__"):
                raise ImportError("bertlib is not available while grading")
            return None

    sys.meta_path.insert(0, RefuseBertlib)
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    torch.set_num_threads(1)  # process-state: the grading child process of its own, one per cell

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
        return {"__not_plain__": type(x).__qualname__}

    def error_text(err):
        try:
            shown = f"{type(err).__name__}: {err}"
        except BaseException:
            shown = type(err).__name__
        return shown[:300]

    namespace = {"__name__": "__exercise__", "torch": torch, "nn": nn, "F": F, "math": math,
                 "IGNORE": -100}
    try:
        exec(compile(request["source"], "<exercise cell>", "exec"), namespace)
    except BaseException as err:
        kind = "bertlib" if "bertlib" in str(err) else "crashed"
        out.write(json.dumps({"kind": kind, "error": error_text(err)}))
        return
    function = namespace.get(request["name"])
    if not callable(function):
        out.write(json.dumps({"kind": "no_function", "error": request["name"]}))
        return
    results = []
    for args in request["cases"]:
        try:
            with torch.no_grad():
                results.append(encode(function(*decode(args))))
        except BaseException as err:
            if "bertlib is not available" in str(err):
                out.write(json.dumps({"kind": "bertlib", "error": error_text(err)}))
                return
            results.append({"__raised__": type(err).__name__, "message": error_text(err)})
    if any(m.split(".")[0] == "bertlib" for m in sys.modules):
        out.write(json.dumps({"kind": "bertlib", "error": "bertlib was imported"}))
        return
    out.write(json.dumps({"results": results}))


if __name__ == "__main__":
    main()
