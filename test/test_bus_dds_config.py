"""Discovery configuration and QoS of the DDS backend, as rmw_cyclonedds (Jazzy) builds them
from the environment and from ROS 2's QoS profiles."""


import shutil
import subprocess
import sys

import domains
import pytest
from cyclonedds.domain import Domain, DomainParticipant
from cyclonedds.qos import Policy

from robot_control.bus.dds import config as cfg
from robot_control.bus.transport import RECEIVE_BUFFER_FRAGMENT, with_receive_buffer


def _unique_domain_id(offset: int) -> int:
    return domains.claim(f"{__name__}-{offset}")


def test_discovery_options_read_the_environment_like_rcl():
    read = cfg.discovery_options_from_env
    assert read({}) == cfg.DiscoveryOptions(0, cfg.DiscoveryRange.SUBNET, ())
    assert read({"ROS_DOMAIN_ID": "42", "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}) == (
        cfg.DiscoveryOptions(42, cfg.DiscoveryRange.LOCALHOST, ())
    )
    assert (
        read({"ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT"}).range
        == cfg.DiscoveryRange.SYSTEM_DEFAULT
    )
    assert read({"ROS_AUTOMATIC_DISCOVERY_RANGE": "OFF"}).range == cfg.DiscoveryRange.OFF
    assert read({"ROS_AUTOMATIC_DISCOVERY_RANGE": "nonsense"}).range == cfg.DiscoveryRange.LOCALHOST
    assert read({"ROS_STATIC_PEERS": "10.0.0.2;;robot.local"}).static_peers == (
        "10.0.0.2",
        "robot.local",
    )
    legacy = read(
        {
            "ROS_LOCALHOST_ONLY": "1",
            "ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET",
            "ROS_STATIC_PEERS": "10.0.0.2",
        }
    )
    assert legacy.range == cfg.DiscoveryRange.LOCALHOST and legacy.static_peers == ()
    for bad in ("-1", "abc", "233"):
        with pytest.raises(ValueError):
            read({"ROS_DOMAIN_ID": bad})


def test_cyclonedds_config_is_rmw_cyclonedds_fragment():
    Options, Range = cfg.DiscoveryOptions, cfg.DiscoveryRange
    auto = (
        "<ParticipantIndex>auto</ParticipantIndex>"
        "<MaxAutoParticipantIndex>32</MaxAutoParticipantIndex>"
    )
    no_multicast = "<General><AllowMulticast>false</AllowMulticast></General>"
    loopback = '<NetworkInterface address="127.0.0.1"/>'
    assert cfg.cyclonedds_config(Options(0, Range.LOCALHOST)) == (
        f"<CycloneDDS><Domain><General><Interfaces>{loopback}</Interfaces>"
        f"<AllowMulticast>false</AllowMulticast></General><Discovery>{auto}"
        '<Peers><Peer address="localhost"/></Peers></Discovery></Domain></CycloneDDS>,'
    )
    # with static peers the automatically chosen interface stays, so remote peers are reachable
    assert cfg.cyclonedds_config(Options(0, Range.LOCALHOST, ("10.0.0.2",)), "file:///x.xml") == (
        '<CycloneDDS><Domain><General><Interfaces><NetworkInterface autodetermine="true"/>'
        f"{loopback}</Interfaces><AllowMulticast>false</AllowMulticast></General>"
        f'<Discovery>{auto}<Peers><Peer address="localhost"/>'
        '<Peer address="10.0.0.2"/></Peers></Discovery></Domain></CycloneDDS>,file:///x.xml'
    )
    assert cfg.cyclonedds_config(Options(0, Range.SUBNET)) == (
        f"<CycloneDDS><Domain><Discovery>{auto}</Discovery></Domain></CycloneDDS>,"
    )
    assert cfg.cyclonedds_config(Options(0, Range.SUBNET, ("a", "b"))) == (
        f'<CycloneDDS><Domain><Discovery>{auto}<Peers><Peer address="a"/><Peer address="b"/>'
        "</Peers></Discovery></Domain></CycloneDDS>,"
    )
    assert cfg.cyclonedds_config(Options(0, Range.OFF, ("a",)), pid=77) == (
        f"<CycloneDDS><Domain>{no_multicast}<Discovery><ParticipantIndex>none</ParticipantIndex>"
        "<Tag>ros_discovery_off_77</Tag></Discovery></Domain></CycloneDDS>,"
    )
    assert cfg.cyclonedds_config(Options(0, Range.SYSTEM_DEFAULT, ("a",)), "<x/>") == "<x/>"
    assert cfg.domain_config_from_env(
        {
            "ROS_DOMAIN_ID": "7",
            "ROS_AUTOMATIC_DISCOVERY_RANGE": "SYSTEM_DEFAULT",
            "CYCLONEDDS_URI": "u",
        }
    ) == (7, RECEIVE_BUFFER_FRAGMENT + ",u")


def test_the_receive_buffer_request_comes_before_the_users_own_config():
    """Cyclone lets a later part of CYCLONEDDS_URI override an earlier one: the user's wins."""
    assert with_receive_buffer("") == RECEIVE_BUFFER_FRAGMENT
    assert with_receive_buffer("file:///mine.xml") == RECEIVE_BUFFER_FRAGMENT + ",file:///mine.xml"
    assert with_receive_buffer(with_receive_buffer("u")) == with_receive_buffer("u")
    assert 'max="4MB"' in RECEIVE_BUFFER_FRAGMENT  # a request: never a minimum that could fail


RECEIVE_BUFFERS = r"""
import os, re, subprocess, sys
from cyclonedds.domain import Domain, DomainParticipant
from robot_control.bus.dds import config as cfg
domain_id, config = cfg.domain_config_from_env({"ROS_DOMAIN_ID": "0",
                                                "ROS_AUTOMATIC_DISCOVERY_RANGE": "OFF"})
if sys.argv[1] == "without":
    config = config.replace(cfg.with_receive_buffer(""), "")
domain, participant = Domain(domain_id, config), DomainParticipant(domain_id)
out = subprocess.run(["ss", "-uamp"], capture_output=True, text=True, timeout=20).stdout
print(" ".join(re.findall(r"pid=%d,[^\n]*\n\s*skmem:\([^)]*rb(\d+)" % os.getpid(), out)))
"""


@pytest.mark.skipif(shutil.which("ss") is None, reason="needs ss (iproute2) to read socket buffers")
def test_a_participant_on_the_packages_config_gets_the_larger_receive_buffer():
    """Real Cyclone participants (own processes): the package's config gets its sockets a 4 MB
    receive buffer where the kernel allows it (Linux reports twice the size asked), Cyclone's
    own default a smaller one; and it starts where the kernel grants less (a max, not a min)."""
    def buffers(which: str) -> list[int]:
        run = subprocess.run([sys.executable, "-c", RECEIVE_BUFFERS, which], capture_output=True,
                             text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        return [int(b) for b in run.stdout.split()]

    allowed = int(open("/proc/sys/net/core/rmem_max").read())
    ours, default = buffers("with"), buffers("without")
    assert ours and default
    assert min(ours) >= 2 * min(4 * 2**20, allowed)
    if allowed >= 4 * 2**20:
        assert max(default) < min(ours)


def test_endpoint_qos_mirrors_rmw_profiles():
    qos = cfg.endpoint_qos(cfg.DEFAULT, "sensor_msgs/msg/JointState")
    assert qos[Policy.History] == Policy.History.KeepLast(10)
    assert qos[Policy.Reliability] == Policy.Reliability.Reliable(max_blocking_time=cfg.INFINITE)
    assert qos[Policy.Durability] == Policy.Durability.Volatile
    assert qos[Policy.WriterDataLifecycle] == Policy.WriterDataLifecycle(autodispose=False)
    assert qos[Policy.Userdata].data == (
        b"typehash=RIHS01_a13ee3a330e346c9d87b5aa18d24e11690752bd33a0350f11c5882bc9179260e;"
    )
    latched = cfg.endpoint_qos(cfg.topic_profile("/robot_description"), "std_msgs/msg/String")
    assert latched[Policy.Durability] == Policy.Durability.TransientLocal
    assert latched[Policy.History] == Policy.History.KeepLast(1)
    assert latched[Policy.DurabilityService].history == Policy.History.KeepLast(1)
    sensor = cfg.endpoint_qos(cfg.SENSOR_DATA)
    assert sensor[Policy.Reliability] == Policy.Reliability.BestEffort
    assert sensor[Policy.History] == Policy.History.KeepLast(5) and Policy.Userdata not in sensor
    rosout = cfg.endpoint_qos(cfg.topic_profile("/rosout"), "rcl_interfaces/msg/Log")
    assert rosout[Policy.Lifespan].lifespan == 10 * 10**9
    assert cfg.topic_profile("/parameter_events").depth == 1000
    assert cfg.topic_profile("ros_discovery_info") == cfg.DISCOVERY_INFO
    assert cfg.topic_profile("/joint_states") == cfg.DEFAULT
    service = cfg.endpoint_qos(
        cfg.PARAMETERS, "rcl_interfaces/srv/GetParameters_Request", extra_user_data="serviceid=ab;"
    )
    assert service[Policy.Userdata].data.startswith(b"serviceid=ab;typehash=RIHS01_135a9e1c")


def test_every_discovery_range_config_is_accepted_by_cyclone():
    for offset, discovery_range in enumerate(cfg.DiscoveryRange, start=1):
        env = {
            "ROS_DOMAIN_ID": str(_unique_domain_id(offset)),
            "ROS_STATIC_PEERS": "127.0.0.1",
            "ROS_AUTOMATIC_DISCOVERY_RANGE": discovery_range.value,
        }
        domain_id, config = cfg.domain_config_from_env(env)
        domain = Domain(domain_id, config)  # Cyclone rejects unknown or misplaced elements
        assert DomainParticipant(domain_id).guid is not None
        del domain


def _loopback_only_host_available() -> bool:
    """True when this test may run a command in a new network namespace (root with unshare)."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _loopback_only_host_available(),
                    reason="needs `unshare -n` (root) to make a host whose only interface is lo")
def test_localhost_config_works_on_a_host_with_only_loopback():
    """Cyclone refuses to select lo twice: the LOCALHOST fragment must not name it beside an
    automatically chosen interface that is lo itself."""
    code = ("import os; from cyclonedds.domain import Domain, DomainParticipant; "
            "from robot_control.bus.dds import config as cfg; "
            "d, c = cfg.domain_config_from_env({'ROS_DOMAIN_ID': '7', "
            "'ROS_AUTOMATIC_DISCOVERY_RANGE': 'LOCALHOST'}); "
            "domain = Domain(d, c); print(DomainParticipant(d).guid is not None)")
    out = subprocess.run(["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" -c "$1"',
                          sys.executable, code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "True", out.stderr
