"""`modelplane serve` as a process: mTLS with certificates made here, and clear failures to start."""

import datetime
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from .conftest import as_dict
from .factories import cluster, request

MODELPLANE = str(Path(sys.executable).parent / "modelplane")


@dataclass(frozen=True)
class Pem:
    cert: bytes
    key: bytes


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _issue(
    subject: str, *, issuer: tuple[x509.Name, ec.EllipticCurvePrivateKey] | None, usage: x509.ObjectIdentifier | None
) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    issuer_name, issuer_key = issuer or (name, key)
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=usage is None, path_length=None), critical=True)
    )
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if usage == ExtendedKeyUsageOID.SERVER_AUTH:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256()), key


def _pem(cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> Pem:
    return Pem(cert=cert.public_bytes(serialization.Encoding.PEM), key=_key_pem(key))


@dataclass(frozen=True)
class Pki:
    ca: Pem
    server: Pem
    client: Pem
    stranger: Pem  # a client certificate from another CA


@pytest.fixture(scope="module")
def pki() -> Pki:
    ca_cert, ca_key = _issue("test-ca", issuer=None, usage=None)
    other_cert, other_key = _issue("other-ca", issuer=None, usage=None)
    server = _issue("localhost", issuer=(ca_cert.subject, ca_key), usage=ExtendedKeyUsageOID.SERVER_AUTH)
    client = _issue("crossplane", issuer=(ca_cert.subject, ca_key), usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    stranger = _issue("crossplane", issuer=(other_cert.subject, other_key), usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    return Pki(ca=_pem(ca_cert, ca_key), server=_pem(*server), client=_pem(*client), stranger=_pem(*stranger))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def tls_server(pki: Pki, tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    certs = tmp_path_factory.mktemp("certs")
    (certs / "tls.crt").write_bytes(pki.server.cert)
    (certs / "tls.key").write_bytes(pki.server.key)
    (certs / "ca.crt").write_bytes(pki.ca.cert)
    port = _free_port()
    env = {**os.environ, "TLS_SERVER_CERTS_DIR": str(certs)}
    proc = subprocess.Popen([MODELPLANE, "serve", "--address", f"127.0.0.1:{port}"], env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        time.sleep(0.1)
    yield port
    proc.terminate()
    proc.wait(timeout=15)


def _call(port: int, creds: grpc.ChannelCredentials | None) -> dict:
    target = f"localhost:{port}"
    channel = grpc.secure_channel(target, creds) if creds is not None else grpc.insecure_channel(target)
    with channel:
        stub = grpcv1.FunctionRunnerServiceStub(channel)
        return as_dict(stub.RunFunction(request(cluster("a")), timeout=10))


def test_a_client_with_a_certificate_from_the_trusted_ca_is_served(tls_server: int, pki: Pki) -> None:
    creds = grpc.ssl_channel_credentials(pki.ca.cert, pki.client.key, pki.client.cert)
    got = _call(tls_server, creds)
    assert got["conditions"] == [
        {
            "type": "GPUPoolsPublished",
            "status": "STATUS_CONDITION_TRUE",
            "reason": "Published",
            "message": "Published 1 GPU pools.",
        }
    ]


@dataclass(frozen=True)
class Refused:
    name: str
    client: str  # "plaintext" | "stranger" | "none"


REFUSED = [
    Refused(name="a plaintext client is refused", client="plaintext"),
    Refused(name="a client with a certificate from another CA is refused", client="stranger"),
    Refused(name="a TLS client without a certificate is refused", client="none"),
]


@pytest.mark.parametrize("case", REFUSED, ids=lambda c: c.name)
def test_untrusted_clients_are_refused(tls_server: int, pki: Pki, case: Refused) -> None:
    creds = {
        "plaintext": None,
        "stranger": grpc.ssl_channel_credentials(pki.ca.cert, pki.stranger.key, pki.stranger.cert),
        "none": grpc.ssl_channel_credentials(pki.ca.cert),
    }[case.client]
    with pytest.raises(grpc.RpcError) as e:
        _call(tls_server, creds)
    assert e.value.code() == grpc.StatusCode.UNAVAILABLE  # pyright: ignore[reportAttributeAccessIssue]


@dataclass(frozen=True)
class CannotStart:
    name: str
    args: tuple[str, ...]
    want: str  # the whole of stderr; "{port}" and "{dir}" are filled in
    code: int = 1  # click: 1 for an error, 2 for a usage error
    files: tuple[tuple[str, str], ...] = ()  # written into {dir} first


CANNOT_START = [
    CannotStart(
        name="the port is taken",
        args=("--insecure", "--address", "127.0.0.1:{port}"),
        want="Error: cannot listen on 127.0.0.1:{port}: the address is in use or not available on this host",
    ),
    CannotStart(
        name="the certificates are missing",
        args=("--tls-certs-dir", "{dir}", "--address", "127.0.0.1:0"),
        want="Error: cannot load TLS certificates from {dir}: No such file or directory: {dir}/tls.crt",
    ),
    CannotStart(
        name="certificates that are not PEM are reported as such, not as an address in use",
        args=("--tls-certs-dir", "{dir}", "--address", "127.0.0.1:0"),
        files=(("tls.crt", "garbage"), ("tls.key", "garbage"), ("ca.crt", "garbage")),
        want="Error: cannot load TLS certificates from {dir}: tls.crt and tls.key are not a PEM certificate and its "
        "private key ([SSL] PEM lib)",
    ),
    CannotStart(
        name="neither TLS nor --insecure is asked for",
        args=("--address", "127.0.0.1:0"),
        want="Usage: modelplane serve [OPTIONS]\nTry 'modelplane serve --help' for help.\n\n"
        "Error: serving needs --tls-certs-dir (or TLS_SERVER_CERTS_DIR) for mTLS, or --insecure",
        code=2,
    ),
]


@pytest.mark.parametrize("case", CANNOT_START, ids=lambda c: c.name)
def test_serve_exits_non_zero_with_a_message_when_it_cannot_start(tmp_path: Path, case: CannotStart) -> None:
    for name, text in case.files:
        (tmp_path / name).write_text(text)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        fill = {"port": busy.getsockname()[1], "dir": tmp_path}
        # GRPC_VERBOSITY unset, as on a user's machine: gRPC's own log lines must not reach stderr.
        env = {k: v for k, v in os.environ.items() if k not in {"TLS_SERVER_CERTS_DIR", "INSECURE", "GRPC_VERBOSITY"}}
        args = [a.format(**fill) for a in case.args]
        proc = subprocess.run(
            [MODELPLANE, "serve", *args], capture_output=True, text=True, env=env, timeout=30, check=False
        )
    assert (proc.returncode, proc.stdout, proc.stderr) == (case.code, "", case.want.format(**fill) + "\n")


def test_serve_writes_each_log_line_as_it_happens_when_its_output_is_a_file(tmp_path: Path) -> None:
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [MODELPLANE, "serve", "--insecure", "--address", "127.0.0.1:0"], stdout=out, stderr=subprocess.PIPE
        )
    try:
        deadline = time.monotonic() + 30
        while not log.read_text() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        lines = log.read_text().splitlines()  # read while it still runs: nothing flushed it at exit
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    assert [json.loads(line)["msg"] for line in lines] == ["Serving function"]
