"""Ports for local services: picked where no outgoing connection can take them first."""
import socket

from hudictl import local_process
from hudictl.local_process import free_port


def test_ports_are_below_the_ephemeral_range_bindable_and_never_handed_out_twice(tmp_path, monkeypatch):
    ranges = tmp_path / "ip_local_port_range"
    ranges.write_text("32768\t60999\n")       # Linux's default, whatever this machine's is
    monkeypatch.setattr(local_process, "EPHEMERAL_RANGE", ranges)
    low = 32768
    ports = [free_port() for _ in range(300)]
    assert len(set(ports)) == len(ports)
    assert all(low - local_process.PICK_SPAN <= p < low for p in ports)
    with socket.socket() as s:
        s.bind(("0.0.0.0", ports[-1]))       # what a service binding every address does
        s.listen()


def test_a_port_held_on_loopback_is_not_bindable():
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        assert not local_process._bindable(held.getsockname()[1])


def test_without_room_below_the_ephemeral_range_the_kernel_chooses_and_never_twice(tmp_path, monkeypatch):
    kernel_low, kernel_high = map(int, local_process.EPHEMERAL_RANGE.read_text().split())
    ranges = tmp_path / "ip_local_port_range"
    ranges.write_text("2000\t60999\n")
    monkeypatch.setattr(local_process, "EPHEMERAL_RANGE", ranges)
    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == len(ports)
    assert all(kernel_low <= p <= kernel_high for p in ports)
    with socket.socket() as s:
        s.bind(("127.0.0.1", ports[-1]))
