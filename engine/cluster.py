"""Real OpenSearch nodes from Maven Central, one JVM each, on loopback.

``build`` resolves the server and its modules with Maven (the first time on a machine it
downloads them, printing each jar; later it needs no network) and compiles the launcher
(``NodeMain.java``). ``LocalCluster`` starts N nodes, each with its own ports and data
path, waits until the cluster is green with every module loaded, and stops them all with
SIGTERM (then SIGKILL after a grace period). For fault tests it also SIGKILLs one node
(``kill``), starts it again on its ports and data path (``restart``), names the elected
cluster manager (``cluster_manager``) and takes extra node settings (``settings``).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

ENGINE_DIR = Path(__file__).resolve().parent
# The newest 2.19.x that resolves on Maven Central with its modules (2.x runs on Java 17).
DEFAULT_VERSION = "2.19.6"
# Per node. Two nodes' worth of heap, and the page cache Lucene relies on, fit a 24 GiB
# machine several times over; more buys nothing on 2 cores.
DEFAULT_HEAP = "1g"
# Free ports are chosen from here up to the ephemeral range (see ``free_port``).
PORT_FLOOR = 20000
MODULES = frozenset({
    "org.opensearch.transport.Netty4Plugin",
    "org.opensearch.analysis.common.CommonAnalysisPlugin",
    "org.opensearch.index.mapper.MapperExtrasPlugin",
    "org.opensearch.index.reindex.ReindexPlugin",
    "org.opensearch.painless.PainlessPlugin",
    "org.opensearch.join.ParentJoinPlugin",
})
MAIN_CLASS = "org.scholarindex.engine.NodeMain"
START_TIMEOUT = 180.0
STOP_TIMEOUT = 30.0

Log = Callable[[str], None]


class EngineError(RuntimeError):
    """The engine could not be built or started; the message says why and where to look."""


def _quiet(_: str) -> None:
    pass


def java_command() -> str:
    """``$JAVA_HOME/bin/java`` when set, else ``java`` on ``PATH``."""
    home = os.environ.get("JAVA_HOME")
    java = str(Path(home) / "bin" / "java") if home else shutil.which("java")
    if not java or not Path(java).exists():
        raise EngineError("no java found: install a JDK 17 (make engine-deps does, as root) "
                          "or set JAVA_HOME")
    return java


def java_version() -> str:
    """The JVM's feature version, as ``java -version`` prints it ("17")."""
    out = subprocess.run([java_command(), "-version"], capture_output=True, text=True,
                         timeout=60).stderr
    quoted = out.split('"')[1] if '"' in out else out.split()[2]
    return quoted.split(".")[0]


def build(version: str = DEFAULT_VERSION, log: Log = _quiet) -> list[str]:
    """The launcher's classpath for ``version``: Maven runs only when something is missing."""
    target = ENGINE_DIR / "target"
    classpath_file = target / f"classpath-{version}.txt"
    launcher = target / "classes" / "org" / "scholarindex" / "engine" / "NodeMain.class"
    if not _fresh(classpath_file, launcher):
        mvn = shutil.which("mvn")
        if mvn is None:
            raise EngineError("no mvn found: install Maven (make engine-deps does, as root)")
        log(f"building the OpenSearch {version} launcher with Maven (the first time on a "
            "machine this downloads the server and its modules from Maven Central)")
        # Batch mode prints one line per downloaded jar: progress a log can keep.
        done = subprocess.run(
            [mvn, "-B", "-f", str(ENGINE_DIR / "pom.xml"), f"-Dopensearch.version={version}",
             "compile"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
        for line in done.stdout.splitlines():
            if line.startswith(("Downloaded", "[ERROR]")) or "BUILD" in line:
                log(line)
        if done.returncode != 0:
            raise EngineError(f"mvn failed (exit {done.returncode}); output above")
    jars = classpath_file.read_text("utf-8").strip().split(os.pathsep)
    return [str(target / "classes"), *jars]


def _fresh(classpath_file: Path, launcher: Path) -> bool:
    """Is the build newer than what it is built from, with every jar still in the cache?"""
    if not classpath_file.exists() or not launcher.exists():
        return False
    newest_source = max(path.stat().st_mtime for path in ENGINE_DIR.glob("src/**/*.java"))
    if (classpath_file.stat().st_mtime < (ENGINE_DIR / "pom.xml").stat().st_mtime
            or launcher.stat().st_mtime < newest_source):
        return False
    return all(Path(jar).exists() for jar in
               classpath_file.read_text("utf-8").strip().split(os.pathsep))


def free_port() -> int:
    """A free loopback port below the kernel's ephemeral range.

    A port the kernel hands out for ``bind(0)`` is in the range it also uses for outgoing
    connections, so between choosing it and a child process binding it, any connection
    could take it (seen: a node's transport port lost to its own connection to a seed
    host, and a static server's port lost under a loaded test run).
    """
    low = _ephemeral_low()
    while True:
        port = random.randrange(PORT_FLOOR, low)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port


def _ephemeral_low() -> int:
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768  # Linux's default
    return max(low, PORT_FLOOR + 1000)


@dataclass
class Node:
    name: str
    http_port: int
    transport_port: int
    home: Path
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def console(self) -> Path:
        return self.home / "logs" / "console.log"


@dataclass
class LocalCluster:
    """N nodes on loopback: node i serves HTTP on ``port + i`` (free ports when ``port``
    is None) and keeps its data in ``data/node-i``.

    ``data`` None is a temporary folder removed on ``stop``. ``exit_with_parent`` makes
    each node stop by itself when this process is gone (tests; not ``make opensearch``).
    """

    nodes: int = 1
    port: int | None = None
    data: Path | None = None
    heap: str = DEFAULT_HEAP
    version: str = DEFAULT_VERSION
    exit_with_parent: bool = False
    cluster_name: str = "scholarindex"
    log: Log = _quiet
    # Extra node settings for every node, e.g. {"thread_pool.write.queue_size": 2}.
    settings: dict[str, object] = field(default_factory=dict)
    members: list[Node] = field(default_factory=list, init=False)
    _temporary: bool = field(default=False, init=False)
    _classpath: list[str] = field(default_factory=list, init=False)

    @property
    def urls(self) -> list[str]:
        return [node.url for node in self.members]

    @property
    def url(self) -> str:
        """Every node's URL, comma-separated, as ``OPENSEARCH_URL`` takes them."""
        return ",".join(self.urls)

    def launch(self) -> LocalCluster:
        """Start every node's JVM; ``wait_ready`` waits for them."""
        self._classpath = build(self.version, self.log)
        if self.data is None:
            self.data, self._temporary = Path(tempfile.mkdtemp(prefix="opensearch-")), True
        self.members = [self._node(i) for i in range(self.nodes)]
        for node in self.members:
            node.process = self._spawn(node, self._classpath, self._settings_of(node))
        self.log(f"started {self.nodes} OpenSearch {self.version} node(s), data in {self.data}, "
                 f"heap {self.heap} each")
        return self

    def _settings_of(self, node: Node) -> dict[str, object]:
        seeds = ",".join(f"127.0.0.1:{member.transport_port}" for member in self.members)
        names = ",".join(member.name for member in self.members)
        settings: dict[str, object] = {
            "cluster.name": self.cluster_name, "node.name": node.name,
            "path.home": node.home, "path.data": node.home / "data",
            "path.logs": node.home / "logs", "network.host": "127.0.0.1",
            "http.port": node.http_port, "transport.port": node.transport_port,
        }
        if self.nodes == 1:
            settings["discovery.type"] = "single-node"
        else:
            settings["discovery.seed_hosts"] = f"[{seeds}]"
            if not any((node.home / "data").iterdir()):  # only a cluster's first start
                settings["cluster.initial_cluster_manager_nodes"] = f"[{names}]"
        return {**settings, **self.settings}

    def kill(self, i: int) -> None:
        """SIGKILL node ``i`` (no flush, no goodbye to the cluster) and reap it."""
        process = self.members[i].process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        self.log(f"killed {self.members[i].name}")

    def restart(self, i: int) -> None:
        """Start node ``i`` again on its ports and data path; it rejoins by itself
        (``wait_ready`` waits for its shards to recover)."""
        node = self.members[i]
        if node.process is not None and node.process.poll() is None:
            raise EngineError(f"{node.name} is still running")
        node.process = self._spawn(node, self._classpath, self._settings_of(node))
        self.log(f"restarted {node.name}")

    def alive(self) -> list[int]:
        """The members whose JVM runs."""
        return [i for i, node in enumerate(self.members)
                if node.process is not None and node.process.poll() is None]

    def cluster_manager(self) -> int:
        """The member that is the elected cluster manager now (asked of a live node)."""
        for i in self.alive():
            answer = _get(self.members[i].url + "/_cat/cluster_manager?format=json")
            if isinstance(answer, list) and answer:
                name = answer[0].get("node")
                for j, node in enumerate(self.members):
                    if node.name == name:
                        return j
        raise EngineError("no live node names an elected cluster manager")

    def _node(self, i: int) -> Node:
        assert self.data is not None
        home = self.data / f"node-{i}"
        (home / "data").mkdir(parents=True, exist_ok=True)
        (home / "logs").mkdir(parents=True, exist_ok=True)
        if self.port is None:
            http, transport = free_port(), free_port()
        else:
            http, transport = self.port + i, self.port + 100 + i
        return Node(f"node-{i}", http, transport, home)

    def _spawn(self, node: Node, classpath: list[str], settings: dict[str, object]
               ) -> subprocess.Popen[bytes]:
        jvm = [f"-Xms{self.heap}", f"-Xmx{self.heap}", "-XX:+UseG1GC",
               "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true",
               "-Dfile.encoding=UTF-8", "-Dlog4j2.formatMsgNoLookups=true",
               "-Dlog4j2.shutdownHookEnabled=false",
               f"-Djava.io.tmpdir={node.home}", f"-Dengine.config={ENGINE_DIR / 'config'}"]
        if self.exit_with_parent:
            jvm.append(f"-Dengine.parent.pid={os.getpid()}")
        command = [java_command(), *jvm, "-cp", os.pathsep.join(classpath), MAIN_CLASS,
                   *(f"{key}={value}" for key, value in settings.items())]
        with node.console.open("ab") as console:
            # Its own session: Ctrl+C in the terminal reaches us, and we stop the nodes.
            return subprocess.Popen(command, stdout=console, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)

    def wait_ready(self, timeout: float = START_TIMEOUT) -> LocalCluster:
        """Wait for every node to join and the cluster to be green with every module."""
        deadline = time.monotonic() + timeout
        query = f"/_cluster/health?wait_for_nodes={self.nodes}&wait_for_status=green&timeout=2s"
        while True:
            self._check_alive()
            # Any live node: after a kill and restart, node 0 may be the one still starting.
            health = None
            for node in self.members:
                health = _get(node.url + query)
                if health and "status" in health:
                    break
            if health and not health.get("timed_out") and health.get("status") == "green":
                break
            if time.monotonic() > deadline:
                raise EngineError(f"the cluster was not green after {timeout:.0f} s "
                                  f"(last health: {health}); node logs: {self.data}")
            time.sleep(0.5)
        plugins = _get(self.members[0].url + "/_nodes/plugins") or {}
        for node in (plugins.get("nodes") or {}).values():
            loaded = {plugin["name"] for plugin in node.get("plugins", [])}
            if MODULES - loaded:
                raise EngineError(f"{node.get('name')} lacks modules: "
                                  f"{sorted(MODULES - loaded)}")
        return self

    def _check_alive(self) -> None:
        for node in self.members:
            if node.process is not None and node.process.poll() is not None:
                tail = node.console.read_text("utf-8", "replace").splitlines()[-30:]
                raise EngineError(f"{node.name} exited with {node.process.returncode} while "
                                  "starting; the end of its log:\n" + "\n".join(tail))

    def stop(self) -> None:
        """SIGTERM every node (each closes cleanly), SIGKILL what outlasts the grace period."""
        running = [n.process for n in self.members if n.process and n.process.poll() is None]
        for process in running:
            process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        for process in running:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._temporary and self.data is not None:
            shutil.rmtree(self.data, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        try:
            return self.launch().wait_ready()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()


def _get(url: str) -> dict | None:
    """GET a JSON answer, or None while the node does not answer yet."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as error:  # 408 while waiting for green: not yet
        return json.loads(error.read() or b"null")
    except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
        return None
