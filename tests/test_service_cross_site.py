"""Requests from other sites' web pages (the second hostile-client review): CORS kept a page from reading answers,
but a form's POST from any site still ran (it stored glossaries); a name a DNS rebinding points at 127.0.0.1 was
the service's own origin; `--cors-origins` was compared as typed; no answer said `nosniff`."""
import pytest

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from pipeline.service import ServiceSettings, create_app  # noqa: E402
from pipeline.service.cors import LOOPBACK_HOSTS  # noqa: E402
from test_documents_service import StandIn  # noqa: E402

GLOSSARY = {"name": "terms", "entries": {"car": "automobile"}}


def client_of(tmp_path, **settings) -> TestClient:
    return TestClient(create_app(StandIn(), ServiceSettings(beam=1, max_wait_ms=1, files_dir=str(tmp_path / "f"),
                                                            **settings)))


def test_a_page_of_another_site_cannot_change_anything_but_the_service_s_own_page_and_other_clients_can(tmp_path):
    with client_of(tmp_path) as client:
        for origin in ("https://evil.example", "null", "http://testserver.evil.example"):
            refused = client.post("/glossaries", json=GLOSSARY, headers={"Origin": origin})
            assert refused.status_code == 403 and "--cors-origins" in refused.json()["error"], origin
            assert client.post("/translate", data={"q": "Hi.", "source": "en", "target": "it"},
                               headers={"Origin": origin}).status_code == 403
        assert client.get("/glossaries").json() == {"glossaries": []}          # was: stored, 201
        assert client.get("/languages", headers={"Origin": "https://evil.example"}).status_code == 200  # reads: CORS
        assert client.post("/glossaries", json=GLOSSARY, headers={"Origin": "http://testserver"}).status_code == 201
        assert client.post("/translate", json={"text": "Hi."}).status_code == 200      # no Origin: not a browser


def test_cors_origins_are_read_as_browsers_write_them_and_wrong_ones_are_one_line_errors(tmp_path):
    settings = ServiceSettings(cors_origins=("HTTPS://A.example/", "http://b.example:80", "https://c.example:8443"))
    assert settings.cors_origins == ("https://a.example", "http://b.example", "https://c.example:8443")
    for wrong in ("https://a.example/app", "a.example", "ftp://a.example", "https://a.example?x=1"):
        with pytest.raises(ValueError, match="expected scheme://host"):
            ServiceSettings(cors_origins=(wrong,))
    with client_of(tmp_path, cors_origins=("HTTPS://A.example/",)) as client:
        preflight = client.options("/glossaries/" + "0" * 32, headers={
            "Origin": "https://a.example", "Access-Control-Request-Method": "DELETE"})
        assert preflight.status_code == 200                                    # was a 400, and DELETE not allowed
        assert client.post("/glossaries", json=GLOSSARY, headers={"Origin": "https://a.example"}).status_code == 201
        assert client.post("/glossaries", json=GLOSSARY, headers={"Origin": "https://b.example"}).status_code == 403
    with client_of(tmp_path, cors_origins=("chrome-extension://abcdefgh",)) as client:      # a translation extension
        assert client.post("/translate", json={"text": "Hi."},
                           headers={"Origin": "chrome-extension://abcdefgh"}).status_code == 200
    with client_of(tmp_path, cors_origins=("*",)) as client:
        assert client.post("/translate", json={"text": "Hi."}, headers={"Origin": "null"}).status_code == 200


def test_a_service_bound_to_this_machine_answers_only_requests_that_name_it(tmp_path):
    with client_of(tmp_path, allowed_hosts=LOOPBACK_HOSTS, public_url="https://mt.example.org/nmt") as client:
        for host in ("127.0.0.1:8000", "localhost", "[::1]:8000", "mt.example.org"):
            assert client.get("/languages", headers={"Host": host}).status_code == 200, host
        rebound = client.get("/languages", headers={"Host": "evil.example:8000"})     # a DNS rebinding
        assert rebound.status_code == 421 and "--public-url" in rebound.json()["error"]


def test_every_answer_says_nosniff_and_the_page_cannot_be_framed_by_another_site(tmp_path):
    with client_of(tmp_path) as client:
        for response in (client.get("/"), client.get("/languages"), client.post("/translate", json={"text": 1})):
            assert response.headers["x-content-type-options"] == "nosniff"
            assert response.headers["content-security-policy"] == "frame-ancestors 'self'"
