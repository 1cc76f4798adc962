"""compose/ without a Docker engine: each compose file follows the Compose specification, every
``sluice`` command line in it parses, and every file it mounts is loaded by the code that reads
it (broker properties, worker properties, connector JSON through the herder's validation,
pipeline configs), with the cross-references between services checked (the hosts a config
names are services, the paths it writes are volumes).
"""

from __future__ import annotations

import copy
import json
import re
import subprocess
import tomllib
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest

from tests.compose._compose import (
    COMPOSE_DIR,
    COMPOSE_FILES,
    GENERATED,
    REPO,
    Service,
    dockerfile_exec,
    load,
    parse,
    services,
    with_host_paths,
)

WORKERS = ("worker-1", "worker")  # cluster.yml's hub workers: the named seed and the scaled rest
SCHEMA = json.loads((Path(__file__).parent / "compose-spec.json").read_text())


def _sluice_services(name: str) -> dict[str, Service]:
    return {n: s for n, s in services(load(name)).items() if s.sluice_args is not None}


def _parsed(service: Service) -> tuple[list[str], dict[str, Any]]:
    assert service.sluice_args is not None
    return parse(with_host_paths(service, service.sluice_args))


def _hosts(bootstrap: str) -> set[str]:
    return {address.rsplit(":", 1)[0] for address in bootstrap.split(",")}


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_compose_file_follows_the_compose_specification(name: str) -> None:
    doc = load(name)
    jsonschema.Draft7Validator(SCHEMA).validate(doc)
    for part in name.split("+"):  # an override file is a valid compose file by itself too
        jsonschema.Draft7Validator(SCHEMA).validate(load(part))
    # The schema is strict enough to catch a slip (a mapping where a list belongs).
    broken = copy.deepcopy(doc)
    first = next(iter(broken["services"].values()))
    first["volumes"] = {"data": "/var/lib/sluice"}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(SCHEMA).validate(broken)


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_every_bind_mount_exists(name: str) -> None:
    for service in services(load(name)).values():
        for target, source in service.binds.items():
            if source == GENERATED:  # made by compose/gen-certs.sh, whose default it is
                assert '$(dirname "$0")/secrets' in (COMPOSE_DIR / "gen-certs.sh").read_text()
                continue
            assert source.exists(), f"{name}: {service.name} mounts missing {source} at {target}"
        env_files = service.spec.get("env_file", [])
        for path in [env_files] if isinstance(env_files, str) else env_files:
            assert (COMPOSE_DIR / path).is_file(), f"{service.name}: env_file {path}"


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_references_between_services_resolve(name: str) -> None:
    """What `docker compose config` checks beyond the schema: dependencies name services,
    named volumes are declared (and every declared one is used), host ports are unique, and
    a dependency waited on to complete is a one-shot service."""
    doc = load(name)
    all_services = services(doc)
    used: set[str] = set()
    published: list[str] = []
    for service in all_services.values():
        depends = service.spec.get("depends_on", {})
        conditions = depends if isinstance(depends, dict) else dict.fromkeys(depends)
        for target, rule in conditions.items():
            assert target in all_services, f"{service.name} depends on unknown {target}"
            if (rule or {}).get("condition") == "service_completed_successfully":
                assert all_services[target].spec.get("restart") == "no", target
            if (rule or {}).get("condition") == "service_healthy":
                check = all_services[target].spec.get("healthcheck", {})
                image_check = all_services[target].runs_sluice_image
                assert not check.get("disable") and (check or image_check), target
        used |= set(service.volumes.values())
        published += [str(p).rsplit(":", 1)[0] for p in service.spec.get("ports", [])]
    assert used == set(doc.get("volumes", {})), "declared volumes != used volumes"
    # Compose interpolates $NAME and ${NAME} from the shell running it; a shell variable meant
    # for the container must be written $$NAME.
    for part in name.split("+"):
        text = (COMPOSE_DIR / part).read_text()
        assert "$" not in text.replace("$$", ""), f"unescaped $ in {part}"
    assert len(published) == len(set(published)), f"a host port is published twice: {published}"


def test_monitoring_and_hdfs_settings_point_at_the_services() -> None:
    import yaml

    all_services = services(load("cluster.yml"))
    grafana = all_services["grafana"]
    provisioning = grafana.host_path("/etc/grafana/provisioning")
    assert provisioning is not None
    (source,) = yaml.safe_load((provisioning / "datasources/prometheus.yml").read_text())[
        "datasources"
    ]
    assert urlsplit(source["url"]).hostname in all_services
    (provider,) = yaml.safe_load((provisioning / "dashboards/sluice.yml").read_text())["providers"]
    assert grafana.host_path(provider["options"]["path"]) == COMPOSE_DIR / "grafana/dashboards"
    # Prometheus scrapes every broker's metrics.port and every worker, with their one token.
    prometheus = all_services["prometheus"]
    config = prometheus.host_path("/etc/prometheus/prometheus.yml")
    assert config is not None
    jobs = {j["job_name"]: j for j in yaml.safe_load(config.read_text())["scrape_configs"]}
    from broker.properties import read_properties

    ports = {
        read_properties(COMPOSE_DIR / f"config/server-{i}.properties")["metrics.port"]
        for i in (1, 2, 3)
    }
    (port,) = ports
    (brokers,) = jobs["sluice-broker"]["static_configs"]
    assert set(brokers["targets"]) == {f"broker-{i}:{port}" for i in (1, 2, 3)}
    (hubs,) = jobs["sluice-hub"]["static_configs"]
    assert hubs["targets"] == ["worker-1:8083"]
    # The scaled service's replicas: Docker's DNS answers its name with each one's address.
    (replicas,) = jobs["sluice-hub"]["dns_sd_configs"]
    assert (replicas["names"], replicas["type"], replicas["port"]) == (["worker"], "A", 8083)
    token_file = jobs["sluice-hub"]["authorization"]["credentials_file"]
    copier = all_services["prometheus-token"]
    assert copier.argv[-1].split()[-2:] == ["/var/lib/sluice/hub.token", token_file]
    assert copier.volume_for("/var/lib/sluice") == "worker-data"
    assert prometheus.volume_for(token_file) == copier.volume_for(token_file) is not None
    env = dict(
        line.split("=", 1)
        for line in (COMPOSE_DIR / "config/hadoop/hadoop.env").read_text().splitlines()
        if line and not line.startswith("#")
    )
    namenode = urlsplit(env["CORE-SITE.XML_fs.defaultFS"])
    assert namenode.hostname in all_services and namenode.hostname == "namenode"
    name_dir = urlsplit(env["HDFS-SITE.XML_dfs.namenode.name.dir"]).path
    assert all_services["namenode"].environment()["ENSURE_NAMENODE_DIR"] == name_dir
    assert env["HDFS-SITE.XML_dfs.datanode.hostname"] == all_services["datanode"].spec["hostname"]
    hdfs_sink = json.loads((COMPOSE_DIR / "connectors/cluster/app-logs-to-hdfs.json").read_text())
    assert urlsplit(hdfs_sink["config"]["hdfs.url"]).netloc == namenode.netloc


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_every_sluice_command_line_parses(name: str) -> None:
    parsed = {n: _parsed(s)[0] for n, s in _sluice_services(name).items()}
    expected = {
        "quickstart.yml": {"sluice": ["up"]},
        "cluster.yml": {
            "broker-1": ["broker"], "broker-2": ["broker"], "broker-3": ["broker"],
            **{name: ["connect"] for name in WORKERS}, "pipeline": ["pipelines", "run"],
        },
    }  # fmt: skip
    expected["cluster.yml+cluster-secure.yml"] = expected["cluster.yml"]
    expected = expected[name]
    assert parsed == expected
    # The parser refuses what it should: a misspelt option fails the same check.
    with pytest.raises(Exception, match="No such option"):
        parse(["broker", "--config-file", "x"])


def test_the_images_default_command_and_the_init_scripts_commands_parse() -> None:
    assert dockerfile_exec("ENTRYPOINT") == ["sluice"]
    assert parse(dockerfile_exec("CMD"))[0] == ["up"]
    script = (COMPOSE_DIR / "init-connectors.sh").read_text()
    assert "sluice connectors status" in script and "sluice connectors create" in script
    assert parse(["connectors", "status", "app-logs"])[0] == ["connectors", "status"]
    assert parse(["connectors", "create", "app-logs.json"])[0] == ["connectors", "create"]


@pytest.mark.parametrize("service_name", ["broker-1", "broker-2", "broker-3"])
def test_broker_properties_load_into_the_brokers_config(service_name: str) -> None:
    from broker.cli.serve import build_config

    all_services = services(load("cluster.yml"))
    service = all_services[service_name]
    path, params = _parsed(service)
    assert path == ["broker"] and params["allow_insecure_network"]
    config: Any = build_config(params["config_file"], params["override"], {})
    broker_id = int(service_name.rsplit("-", 1)[1])
    assert config.node_id == broker_id
    assert (config.advertised_host, config.advertised_port) == (service_name, 9092)
    assert service.spec["hostname"] == service_name
    assert (config.host, config.port) == ("0.0.0.0", 9092)
    zk_host = config.zookeeper_connect.split(":")[0]
    assert zk_host in all_services, f"zookeeper.connect names no service: {zk_host}"
    assert config.default_replication_factor == 3
    assert config.offsets_topic_replication_factor == 3
    assert config.log_defaults["min.insync.replicas"] == "2"
    assert service.volume_for(str(config.data_dir)) == f"{service_name}-data"
    assert config.metrics_port == 9404  # what compose/prometheus/prometheus.yml scrapes
    # No broker port is published: nothing outside the Compose network reaches it.
    assert "ports" not in service.spec


def _loaded_worker_config(service: Service) -> Any:
    """The worker config ``sluice up``/``sluice connect`` builds from the service's command."""
    from sluice.commands import _key_values, _worker_config

    _, params = _parsed(service)
    extra = _key_values(params.get("override", []), "--override")
    return _worker_config(
        params["config"], params.get("bootstrap", ""), params["rest_port"], params["host"],
        params["data_dir"], extra,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("name", "service_name"),
    [("quickstart.yml", "sluice"), *(("cluster.yml", name) for name in WORKERS)],
)
def test_worker_properties_load_into_the_workers_config(name: str, service_name: str) -> None:
    all_services = services(load(name))
    service = all_services[service_name]
    path, _ = _parsed(service)
    worker = _loaded_worker_config(service)
    assert worker.rest_host_name == "0.0.0.0"
    if service_name == "worker":
        # Replicas publish no port (they would clash) and advertise their container's address,
        # an IP literal, which the DNS-rebinding guard lets through.
        assert "ports" not in service.spec and worker.rest_advertised_host_name is None
    else:
        assert any(str(p).endswith(f":{worker.rest_port}") for p in service.spec["ports"])
        # The host name other containers use is one the DNS-rebinding guard lets through.
        own = service.spec.get("hostname", service_name)
        assert own in (worker.rest_advertised_host_name, *worker.rest_allowed_hosts.split(","))
    assert service.volume_for(worker.data_dir) is not None, "data.dir must be on a volume"
    for root in (worker.file_allowed_paths or "").split(","):
        mounted = service.volume_for(root) or service.host_path(root)
        assert mounted is not None, f"file.allowed.paths {root} is not mounted"
    if path == ["connect"]:
        assert _hosts(worker.bootstrap_servers) == {"broker-1", "broker-2", "broker-3"}
        assert worker.internal_topic_replication_factor == 3
    else:
        assert path == ["up"]


@pytest.mark.parametrize("name", ["cluster.yml", "cluster.yml+cluster-secure.yml"])
def test_the_workers_form_one_group_with_one_token_and_scale(name: str) -> None:
    all_services = services(load(name))
    seed, scaled = (all_services[n] for n in WORKERS)
    configs = [_loaded_worker_config(w) for w in (seed, scaled)]
    # One group: the same group.id and internal topics (docs/distributed.md).
    group = {(c.group_id, c.config_storage_topic, c.offset_storage_topic,
              c.status_storage_topic) for c in configs}  # fmt: skip
    assert len(group) == 1, group
    # worker-1 advertises the name the others reach it by (forwarded requests go there); the
    # replicas of `worker` (two by default, `--scale worker=N`) their own addresses.
    assert configs[0].rest_advertised_host_name == seed.spec["hostname"] == "worker-1"
    assert "hostname" not in scaled.spec and "container_name" not in scaled.spec
    assert scaled.spec["deploy"]["replicas"] == 2
    # One REST credential: hub.token in the data volume they all share, generated by
    # worker-1 before the others start (they wait for it to be healthy).
    assert {w.volume_for(c.data_dir) for w, c in zip((seed, scaled), configs, strict=True)} == {
        "worker-data"
    }
    assert not any(c.rest_auth_token for c in configs)  # so the token file is what they use
    assert scaled.spec["depends_on"] == {"worker-1": {"condition": "service_healthy"}}


def _worker_of(name: str, init: Service) -> tuple[Service, Any]:
    """The worker service an init service talks to and its loaded config."""
    env = init.environment()
    host = urlsplit(env["SLUICE_REST_URL"]).hostname
    all_services = services(load(name))
    assert host in all_services, f"SLUICE_REST_URL names no service: {host}"
    worker = all_services[host]
    config = _loaded_worker_config(worker)
    # The init service reads the token the worker generated, from the worker's data volume.
    token_file = env["SLUICE_REST_TOKEN_FILE"]
    assert token_file == f"{config.data_dir}/hub.token"
    assert init.volume_for(token_file) == worker.volume_for(config.data_dir)
    return worker, config


# The secure variant mounts the same connector files; its worker's TLS files exist only where
# compose/gen-certs.sh ran (test_cluster_local.py runs it).
@pytest.mark.parametrize("name", ["quickstart.yml", "cluster.yml"])
def test_connector_files_pass_the_herders_validation(name: str) -> None:
    from hub.runtime.herder import Herder
    from hub.runtime.storage.config_store import MemoryConfigStore
    from hub.runtime.storage.offset_store import MemoryOffsetStore
    from hub.runtime.storage.status_store import MemoryStatusStore

    init = services(load(name))["connectors-init"]
    worker, config = _worker_of(name, init)
    directory = init.host_path(init.environment()["CONNECTORS_DIR"])
    assert directory is not None and directory.is_dir()
    files = sorted(directory.glob("*.json"))
    assert len(files) >= 3
    herder = Herder(
        config, config_store=MemoryConfigStore(), offset_store=MemoryOffsetStore(),
        status_store=MemoryStatusStore(),
    )  # fmt: skip
    for file in files:
        body = json.loads(file.read_text())
        assert body["name"] == file.stem, "init-connectors.sh names connectors by file"
        connector = {**body["config"], "name": body["name"]}
        result = herder.validate_config(connector["connector.class"], connector)
        errors = {
            c["value"]["name"]: c["value"]["errors"]
            for c in result["configs"]
            if c["value"]["errors"]
        }
        assert result["error_count"] == 0, f"{file.name}: {errors}"
        for key in ("file", "files"):
            if key in connector:  # a path the worker's container has
                mounted = worker.volume_for(connector[key]) or worker.host_path(connector[key])
                assert mounted is not None, f"{file.name}: {connector[key]} is not mounted"
    # The same validation refuses a path outside the worker's file.allowed.paths.
    bad = {"connector.class": "FileStreamSource", "name": "b", "file": "/etc/passwd", "topic": "t"}
    refused = herder.validate_config("FileStreamSource", bad)["configs"]
    assert any(c["value"]["name"] == "file" and c["value"]["errors"] for c in refused)


def test_pipeline_config_loads_into_its_template() -> None:
    from spark_pipelines.cli import read_config
    from spark_pipelines.templates import load as load_template

    all_services = services(load("cluster.yml"))
    pipeline = all_services["pipeline"]
    path, params = _parsed(pipeline)
    assert path == ["pipelines", "run"]
    config = load_template(params["name"]).Config.model_validate(read_config(params["config"]))
    assert _hosts(config.input.bootstrap_servers) == {"broker-1", "broker-2", "broker-3"}
    master = urlsplit(params["master"])
    assert master.scheme == "spark" and master.hostname in all_services
    # Checkpoints (and the state store of the windowed count) are written by the driver and
    # the executors: the same volume at the same path in both containers.
    checkpoint = str(config.checkpoint_dir)
    volume = pipeline.volume_for(checkpoint)
    assert volume is not None and all_services["spark-worker"].volume_for(checkpoint) == volume
    # The pipeline reads what the log source writes.
    source = json.loads((COMPOSE_DIR / "connectors/cluster/app-logs.json").read_text())
    assert config.input.topics == [source["config"]["topic"]]


def test_dockerfile_builds_a_slim_non_root_image_with_a_healthcheck() -> None:
    text = (REPO / "Dockerfile").read_text()
    stages = re.findall(r"^FROM python:\$\{PYTHON_VERSION\}-slim", text, re.M)
    assert len(stages) == 2, "multi-stage: build and runtime"
    assert re.search(r"^USER sluice$", text, re.M)
    assert re.search(r"^HEALTHCHECK .*\n\s+CMD \[\"sluice-healthcheck\", \"http\"", text, re.M)
    extras = re.search(r"^ARG SLUICE_EXTRAS=(.*)$", text, re.M)
    assert extras is not None
    defined = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    assert set(filter(None, extras.group(1).split(","))) <= set(defined)
    ignored = (REPO / ".dockerignore").read_text().split()
    for source in re.findall(r"^COPY (?!--from)(\S+) ", text, re.M):
        if source != ".":
            assert (REPO / source).exists(), source
            assert not any(source.startswith(p.strip("/")) for p in ignored), source
    for needed in ("pyproject.toml", "README.md", "sluice", "broker", "hub", "compose"):
        assert not any(p.strip("/") == needed for p in ignored), f".dockerignore drops {needed}"
    # Every volume a Sluice container writes starts owned by the image's user: a named volume
    # copies the ownership of the image directory it is mounted on, which must exist.
    made = re.search(r"mkdir -p (/var/lib/sluice[^\\&]*)", text)
    assert made is not None
    created = made.group(1).split()
    for name in COMPOSE_FILES:
        for service in services(load(name)).values():
            if service.runs_sluice_image and service.spec.get("user") != "0:0":
                for target in service.volumes:
                    assert any(c == target or c.startswith(target + "/") for c in created), (
                        f"{name}: {service.name} mounts a volume on {target}, not in the image"
                    )


def test_scripts_are_valid_shell_and_the_log_producer_writes_what_the_pipeline_parses(
    tmp_path: Path,
) -> None:
    from spark_pipelines.templates.log_aggregation import FIELDS

    for script in ("init-connectors.sh", "log-producer.sh", "smoke.sh", "gen-certs.sh"):
        subprocess.run(["sh", "-n", str(COMPOSE_DIR / script)], check=True)
    log = tmp_path / "app.log"
    subprocess.run(
        ["sh", str(COMPOSE_DIR / "log-producer.sh")],
        env={"LOG_FILE": str(log), "LINES": "20", "INTERVAL": "0", "PATH": "/usr/bin:/bin"},
        check=True,
    )
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 20 and all(set(line) == set(FIELDS) for line in lines)
    assert {line["level"] for line in lines} == {"INFO", "WARN", "ERROR"}


def test_deploy_doc_names_every_service() -> None:
    doc = (REPO / "docs" / "deploy.md").read_text()
    for name in COMPOSE_FILES:
        for service in load(name)["services"]:
            assert f"`{service}`" in doc, f"docs/deploy.md does not describe {service} ({name})"


SECURE = "cluster.yml+cluster-secure.yml"


@pytest.mark.parametrize("service_name", ["broker-1", "broker-2", "broker-3"])
def test_secure_brokers_take_clients_over_tls_with_certificates_only(service_name: str) -> None:
    from broker.cli.serve import build_config

    doc = load(SECURE)
    all_services = services(doc)
    service = all_services[service_name]
    _, params = _parsed(service)
    config: Any = build_config(params["config_file"], params["override"], {})
    ssl, internal = config.listeners
    assert (ssl.protocol, ssl.host, ssl.port) == ("SSL", "0.0.0.0", 9093)
    assert ssl.advertised == (service_name, 9093)
    assert config.security["ssl.client.auth"] == "required"
    for key in ("ssl.keystore.location", "ssl.truststore.location"):
        source = service.host_path(config.security[key])
        assert source is not None and source.parent == GENERATED
    # Replication stays PLAINTEXT (the broker requires it) on a network only brokers join.
    assert internal.protocol == "PLAINTEXT" and config.inter_broker_listener_name == internal.name
    assert service.spec["networks"]["brokers"]["aliases"] == [internal.host]
    assert doc["networks"]["brokers"]["internal"] is True
    members = {n for n, s in all_services.items() if "brokers" in s.spec.get("networks", {})}
    assert members == {"broker-1", "broker-2", "broker-3"}
    assert config.metrics_port == 9404 and "/ready" in str(service.spec["healthcheck"]["test"])


def test_secure_clients_present_the_hub_certificate() -> None:
    from spark_pipelines.cli import read_config
    from spark_pipelines.templates import load as load_template

    all_services = services(load(SECURE))
    worker = all_services["worker-1"]
    configs = [_loaded_worker_config(all_services[name]) for name in WORKERS]
    assert [c.rest_advertised_host_name for c in configs] == ["worker-1", None]
    assert {c.client_config("producer")["security.protocol"] for c in configs} == {"SSL"}
    config = configs[0]
    client = config.client_config("producer")
    assert client["security.protocol"] == "SSL"
    assert {p.split(":")[1] for p in config.bootstrap_servers.split(",")} == {"9093"}
    pipeline = all_services["pipeline"]
    _, pparams = _parsed(pipeline)
    template = load_template(pparams["name"]).Config.model_validate(read_config(pparams["config"]))
    assert template.input.kafka["security.protocol"] == "SSL"
    for settings, service in (
        (client, worker), (template.input.kafka, pipeline),
        (template.input.kafka, all_services["spark-worker"]),  # the executors read too
    ):  # fmt: skip
        for key in ("ssl.ca.location", "ssl.certificate.location", "ssl.key.location"):
            source = service.host_path(settings[key])
            assert source is not None and source.parent == GENERATED, (service.name, key)
