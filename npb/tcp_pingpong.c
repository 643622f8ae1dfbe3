/* tcp_pingpong: the ping-pong of impi_pingpong over one plain TCP connection
 * between two processes: the baseline of npb/impi-bench.
 *
 *     tcp_pingpong [--sizes LIST] [--max BYTES] [--iters N] [--budget BYTES]
 *                  [--port P] [--connect ADDR:PORT] [--socbuf BYTES] [--spin] [--timeout S]
 *                  [--bind ADDR] [--role both|listen|connect] [--stream [--window W]]
 *
 * The process listens on 127.0.0.1:P (--port, default any), forks, and the
 * child connects to the listener, or to --connect (a forwarder in front of
 * the listener).  The parent plays rank 0 (sends, times,
 * prints), the child rank 1 (echoes).  TCP_NODELAY on both ends; socket
 * buffers left to the kernel unless --socbuf.  Receives block in recv()
 * unless --spin: then they poll with MSG_DONTWAIT as an MPI library's
 * progress loop does (no sleep and wake-up per message; faster on an idle
 * host, slower on an over-committed one).  Both processes end after
 * --timeout seconds (default 600) whatever happens.
 *
 * --role splits the two processes (for two network namespaces joined by
 * gridmpi-wanem): "listen" listens on --bind ADDR (default 127.0.0.1) and
 * port --port and plays rank 0 alone; "connect" connects to --connect and
 * plays rank 1 alone.  The default, "both", forks as above.
 *
 * --stream is impi_pingpong --stream over TCP: per round rank 0 sends W
 * (--window, default 16) messages of `size` bytes back to back, rank 1
 * receives them and answers one byte; output lines
 *     ST bytes=65536 window=16 iters=.. mbps_avg=.. mbps_best=.. us_per_msg=..
 *
 * Sizes, iterations and the output lines are impi_pingpong's (see there):
 *     PP bytes=65536 iters=1000 lat_avg_us=.. lat_min_us=.. mbps_avg=.. mbps_best=..
 * Exit status 0 when every echo matched and the child exited 0.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_args.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *who, const char *what) {
  fprintf(stderr, "tcp_pingpong: %s: %s: %s\n", who, what, strerror(errno));
  exit(1);
}

static void send_all(int fd, const unsigned char *p, long n, const char *who) {
  while (n > 0) {
    ssize_t k = send(fd, p, (size_t)n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) die(who, "send");
    p += k, n -= k;
  }
}

static int spin;

static void recv_all(int fd, unsigned char *p, long n, const char *who) {
  while (n > 0) {
    ssize_t k = recv(fd, p, (size_t)n, spin ? MSG_DONTWAIT : 0);
    if (k < 0 && (errno == EINTR || (spin && (errno == EAGAIN || errno == EWOULDBLOCK)))) continue;
    if (k == 0) errno = ECONNRESET;
    if (k <= 0) die(who, "recv");
    p += k, n -= k;
  }
}

static void tune(int fd, long socbuf) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (socbuf > 0) {
    int b = (int)socbuf;
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b, sizeof b);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b, sizeof b);
  }
}

/* One --stream size: rounds of `window` messages from rank 0, one byte back.
 * Rank 1 checks the last round's messages.  Returns 0 on a mismatch. */
static int stream_size(int fd, int rank, long n, int window, int iters, const unsigned char *sbuf,
                       unsigned char *rbuf, const char *who) {
  unsigned char token = 0;
  double total = 0, best = 1e30;
  if (rank == 0) send_all(fd, &token, 1, who), recv_all(fd, &token, 1, who);
  else recv_all(fd, &token, 1, who), send_all(fd, &token, 1, who);
  const int warmup = bench_warmup(iters);
  for (int it = -warmup; it < iters; ++it) {
    double t0 = now();
    if (rank == 0) {
      for (int w = 0; w < window; ++w) send_all(fd, sbuf, n, who);
      recv_all(fd, &token, 1, who);
    } else {
      for (int w = 0; w < window; ++w) recv_all(fd, rbuf + (long)w * n, n, who);
      send_all(fd, &token, 1, who);
    }
    double dt = now() - t0;
    if (it >= 0) {
      total += dt;
      if (dt < best) best = dt;
    }
  }
  if (rank == 1) {
    for (int w = 0; w < window; ++w)
      if (memcmp(sbuf, rbuf + (long)w * n, (size_t)n) != 0) {
        fprintf(stderr, "tcp_pingpong: --stream %ld bytes: message %d differs from what was sent\n", n, w);
        return 0;
      }
    return 1;
  }
  double avg = total / iters;
  printf("ST bytes=%ld window=%d iters=%d mbps_avg=%.2f mbps_best=%.2f us_per_msg=%.2f\n", n, window, iters,
         (double)n * window / avg / 1e6, (double)n * window / best / 1e6, avg / window * 1e6);
  fflush(stdout);
  return 1;
}

int main(int argc, char **argv) {
  long sizes[MAX_SIZES];
  int nsizes = parse_sizes("0,1,8,64,512,4k,16k,64k,256k,1m,4m,16m", sizes);
  long max = -1, budget = 256L * 1024 * 1024, socbuf = 0;
  int iters_fixed = 0, port = 0, timeout = 600, stream = 0, window = 16;
  const char *connect_to = NULL, *bind_to = "127.0.0.1", *role = "both";
  for (int i = 1; i < argc; ++i) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int good = v != NULL;
    if (!strcmp(argv[i], "--sizes") && v) nsizes = parse_sizes(v, sizes), good = nsizes > 0;
    else if (!strcmp(argv[i], "--max") && v) max = parse_bytes(v, &good);
    else if (!strcmp(argv[i], "--budget") && v) budget = parse_bytes(v, &good);
    else if (!strcmp(argv[i], "--iters") && v) iters_fixed = atoi(v), good = iters_fixed > 0;
    else if (!strcmp(argv[i], "--port") && v) port = atoi(v), good = port > 0 && port < 65536;
    else if (!strcmp(argv[i], "--connect") && v) connect_to = v;
    else if (!strcmp(argv[i], "--socbuf") && v) socbuf = parse_bytes(v, &good);
    else if (!strcmp(argv[i], "--timeout") && v) timeout = atoi(v), good = timeout > 0;
    else if (!strcmp(argv[i], "--bind") && v) bind_to = v;
    else if (!strcmp(argv[i], "--window") && v) window = atoi(v), good = window > 0 && window <= 1024;
    else if (!strcmp(argv[i], "--role") && v)
      role = v, good = !strcmp(v, "both") || !strcmp(v, "listen") || !strcmp(v, "connect");
    else if (!strcmp(argv[i], "--stream")) {
      stream = 1;
      continue;
    } else if (!strcmp(argv[i], "--spin")) {
      spin = 1;
      continue;
    } else good = 0;
    if (!good) {
      fprintf(stderr, "tcp_pingpong: bad argument %s%s%s (see the top of tcp_pingpong.c)\n", argv[i], v ? " " : "",
              v ? v : "");
      return 2;
    }
    ++i;
  }
  alarm((unsigned)timeout);
  const int listen_only = !strcmp(role, "listen"), connect_only = !strcmp(role, "connect");
  if (connect_only && !connect_to) {
    fprintf(stderr, "tcp_pingpong: --role connect needs --connect ADDR:PORT\n");
    return 2;
  }

  struct sockaddr_in at;
  memset(&at, 0, sizeof at);
  at.sin_family = AF_INET;
  if (inet_pton(AF_INET, bind_to, &at.sin_addr) != 1) {
    fprintf(stderr, "tcp_pingpong: --bind %s: want a.b.c.d\n", bind_to);
    return 2;
  }
  at.sin_port = htons((unsigned short)port);
  int lfd = -1;
  if (!connect_only) {
    lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&at, sizeof at) != 0 || listen(lfd, 4) != 0)
      die("listener", bind_to);
    if (listen_only) {
      printf("# listening on %s:%d\n", bind_to, port);
      fflush(stdout);
    }
  }
  socklen_t alen = sizeof at;
  if (lfd >= 0) getsockname(lfd, (struct sockaddr *)&at, &alen);
  struct sockaddr_in to = at;
  if (connect_to) {
    char host[64];
    int p;
    if (sscanf(connect_to, "%63[^:]:%d", host, &p) != 2 || inet_pton(AF_INET, host, &to.sin_addr) != 1) {
      fprintf(stderr, "tcp_pingpong: --connect %s: want a.b.c.d:port\n", connect_to);
      return 2;
    }
    to.sin_port = htons((unsigned short)p);
  }

  long largest = 0;
  for (int s = 0; s < nsizes; ++s)
    if ((max < 0 || sizes[s] <= max) && sizes[s] > largest) largest = sizes[s];
  unsigned char *sbuf = malloc((size_t)largest + 1), *rbuf = malloc((size_t)largest * (stream ? window : 1) + 1);
  if (!sbuf || !rbuf) die("main", "malloc");
  for (long j = 0; j <= largest; ++j) sbuf[j] = (unsigned char)(j * 131 + 7), rbuf[j] = 0;

  fflush(stdout);
  pid_t child = listen_only || connect_only ? 1 : fork();
  if (child < 0) die("main", "fork");
  int rank = child == 0 || connect_only ? 1 : 0;
  const char *who = rank ? "echo process" : "timing process";
  int fd;
  if (rank == 1) {
    alarm((unsigned)timeout);
    if (lfd >= 0) close(lfd);
    fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    tune(fd, socbuf);
    if (connect(fd, (struct sockaddr *)&to, sizeof to) != 0) die(who, connect_to ? connect_to : "connect");
  } else {
    fd = accept(lfd, NULL, NULL);
    if (fd < 0) die(who, "accept");
    tune(fd, socbuf);
    close(lfd);
    printf("# tcp_pingpong%s: two processes, one TCP connection%s%s, socket buffers %s, %s receives; MB/s = 10^6 "
           "bytes/s, latency = half round trip\n", stream ? " --stream" : "", connect_to ? " via " : "",
           connect_to ? connect_to : "", socbuf > 0 ? "set" : "kernel autotuned", spin ? "polling" : "blocking");
    fflush(stdout);
  }

  int ok = 1;
  for (int s = 0; s < nsizes; ++s) {
    long n = sizes[s];
    if (max >= 0 && n > max) continue;
    int iters = iters_fixed;
    if (!iters) {
      iters = bench_rounds(stream ? budget / window : budget, n);
    }
    if (stream) {
      if (!stream_size(fd, rank, n, window, iters, sbuf, rbuf, who)) ok = 0;
      continue;
    }
    double total = 0, best = 1e30;
    unsigned char token = 0;
    /* start together, as MPI_Barrier does in impi_pingpong */
    if (rank == 0) send_all(fd, &token, 1, who), recv_all(fd, &token, 1, who);
    else recv_all(fd, &token, 1, who), send_all(fd, &token, 1, who);
    const int warmup = bench_warmup(iters);
    for (int it = -warmup; it < iters; ++it) {
      double t0 = now();
      if (rank == 0) {
        send_all(fd, sbuf, n, who);
        recv_all(fd, rbuf, n, who);
      } else {
        recv_all(fd, rbuf, n, who);
        send_all(fd, rbuf, n, who);
      }
      double dt = now() - t0;
      if (it >= 0) {
        total += dt;
        if (dt < best) best = dt;
      }
    }
    if (rank == 0) {
      if (memcmp(sbuf, rbuf, (size_t)n) != 0) {
        fprintf(stderr, "tcp_pingpong: %ld bytes: the echo differs from what was sent\n", n);
        ok = 0;
      }
      double half_avg = total / iters / 2, half_min = best / 2;
      printf("PP bytes=%ld iters=%d lat_avg_us=%.2f lat_min_us=%.2f mbps_avg=%.2f mbps_best=%.2f\n", n, iters,
             half_avg * 1e6, half_min * 1e6, (double)n / half_avg / 1e6, (double)n / half_min / 1e6);
      fflush(stdout);
      memset(rbuf, 0, (size_t)n);
    }
  }
  close(fd);
  free(sbuf);
  free(rbuf);
  if (rank == 1) return ok ? 0 : 1;
  if (listen_only) return ok ? 0 : 1;
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "tcp_pingpong: the echo process failed (status %d)\n", status);
    ok = 0;
  }
  return ok ? 0 : 1;
}
