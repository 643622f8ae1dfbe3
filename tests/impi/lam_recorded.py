"""Bytes LAM/MPI 7.1.4 (built by tests/thirdparty/lam/build) really sent, recorded by
`tests/impi/test_lam.py --record DIR` (gridmpi: 1 rank, client 0, 10.92.0.1; LAM: client 1,
2 ranks, one host 10.92.0.2, its processes pids 7 and 8 in a private PID namespace), for the
fakes: fake_server.py plays a LAM client with LAM_LABELS."""

# LAM's client 1 contributions to the 14 start-up labels (COLL payloads after the label code):
# one host serving both processes; C_DATALEN 65536, H_ACKMARK 10, H_HIWATER 20, XSIZE and
# MAXLINEAR -1; version 0.0 only.
LAM_LABELS = {
    0x1000: bytes.fromhex("0000000000000000"),
    0x1100: bytes.fromhex("00000001"),
    0x1200: bytes.fromhex("00000002"),
    0x1300: bytes.fromhex("00010000"),
    0x1400: bytes.fromhex("7fffffff"),
    0x1500: bytes.fromhex("ffffffff"),
    0x1600: bytes.fromhex("ffffffff"),
    0x2000: bytes.fromhex("0000000000000000000000000a5c0002"),
    0x2100: bytes.fromhex("0000903d"),
    0x2200: bytes.fromhex("00000002"),
    0x2300: bytes.fromhex("0000000a"),
    0x2400: bytes.fromhex("00000014"),
    0x3000: bytes.fromhex("0000000000000000000000000a5c00020000000000000000000000000a5c0002"),
    0x3100: bytes.fromhex("00000000000000070000000000000008"),
}

# LAM's host connecting to gridmpi's: its 4-byte host index, then its first packet, rank 1's
# MPI_Send of 5 MPI_INT (0x02040608 + 0x10000 * 0 + i) to rank 0, tag 1: a DATA packet whose
# data are NATIVE little-endian ints (not external32), pk_srqid 0, pk_lsrank = world rank.
LAM_HOST_INDEX = bytes.fromhex("00000001")
LAM_DATA_INTS = bytes.fromhex("00000000000000140000000000000000000000000a5c000200000000000000070000000000000000000000000a5c000100000000000018a300000000000000000000000000000000000000000000001400000001000000010000000000000000000000000000000100000000000000000000000000000000000000000000000008060402090604020a0604020b0604020c060402")
# Rank 1's IMPI Barrier message to rank 0: zero-byte DATA, pk_cid 1 (the IMPI collective
# context of MPI_COMM_WORLD), tag 110.
LAM_BARRIER = bytes.fromhex("00000000000000000000000000000000000000000a5c000200000000000000070000000000000000000000000a5c000100000000000018a3000000000000000000000000000000000000000000000000000000010000006e00000000000000010000000000000006000000000000000000000000000000000000000000000000")
