"""Which launcher binds DynamoDB Local to 127.0.0.1: the one ``javac`` compiled into the engine's
folder, compiled once and then reused; its source where there is no ``javac`` or no folder to write;
and which ``javac``: the one beside the ``java`` that runs the engine.

Engine: none, and no Java (a folder standing in for the engine's; a ``javac`` that must not run).
tests/dynamodb_local/test_engine_on_loopback.py starts the engine from the source.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from sensor_digest_tools.aws.dynamodb_local import LAUNCHER_SOURCE, javac_beside, launcher


def compiled_folder(directory: Path) -> Path:
    return directory / f"loopback-{hashlib.sha256(LAUNCHER_SOURCE.read_bytes()).hexdigest()[:12]}"


def test_without_javac_the_engine_runs_its_launcher_from_the_source(tmp_path: Path) -> None:
    arguments = launcher(tmp_path, javac=None)

    assert arguments == ["-cp", str(tmp_path / "DynamoDBLocal.jar"), str(LAUNCHER_SOURCE)]
    assert LAUNCHER_SOURCE.is_file()


def test_a_launcher_compiled_before_is_used_without_compiling_it_again(tmp_path: Path) -> None:
    # Given the launcher of this source compiled into the engine's folder by an earlier start
    built = compiled_folder(tmp_path)
    built.mkdir()
    (built / "LoopbackEngine.class").write_bytes(b"\xca\xfe\xba\xbe")

    # When the engine starts again, with a javac that cannot run
    arguments = launcher(tmp_path, javac=str(tmp_path / "no-such-javac"))

    # Then that class runs, beside the engine's jar
    assert arguments[-1] == "LoopbackEngine"
    assert arguments[:2] == ["-cp", os.pathsep.join([str(tmp_path / "DynamoDBLocal.jar"), str(built)])]


def test_a_launcher_compiled_from_another_source_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "loopback-000000000000").mkdir()
    (tmp_path / "loopback-000000000000" / "LoopbackEngine.class").write_bytes(b"\xca\xfe\xba\xbe")

    assert launcher(tmp_path, javac=None)[-1] == str(LAUNCHER_SOURCE)


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_the_javac_that_compiles_the_launcher_is_the_one_of_the_java_that_runs_it(tmp_path: Path) -> None:
    # Given java on PATH as a link into a JDK (as Debian's alternatives and most installs put it),
    # and another javac elsewhere (another JDK's, whose classes that java may not load)
    jdk_java = executable(tmp_path / "jdk-17" / "bin" / "java")
    jdk_javac = executable(tmp_path / "jdk-17" / "bin" / "javac")
    executable(tmp_path / "bin" / "javac")
    (tmp_path / "bin" / "java").symlink_to(jdk_java)
    # and a Java runtime alone
    jre_java = executable(tmp_path / "jre-17" / "bin" / "java")

    assert javac_beside(str(tmp_path / "bin" / "java")) == str(jdk_javac)
    assert javac_beside(str(jre_java)) is None
