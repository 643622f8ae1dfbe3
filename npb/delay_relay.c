/* delay_relay: a user-space TCP relay that adds a fixed one-way delay, to
 * emulate a wide-area link on one machine (netem is not available here).
 *
 *     delay_relay --listen ADDR:PORT --target ADDR:PORT --delay-ms D
 *                 [--max-queue BYTES] [--lifetime S]
 *
 * Every accepted connection is forwarded to --target.  In each direction a
 * reader thread takes whatever the socket has (up to 256 KiB at a time),
 * stamps it with the time it arrived and queues it; a writer thread sends
 * each chunk D milliseconds after its stamp.  So the link has a latency of D
 * each way and, as long as the queue holds a bandwidth-delay product
 * (--max-queue, default 256 MiB per direction; a full queue stops the reader,
 * which TCP turns into back-pressure), the bandwidth of loopback.  An end of
 * stream is forwarded (shutdown) after the delay too.
 *
 * Prints "delay_relay: listening ADDR:PORT" once ready (PORT 0: any free
 * port, the one chosen is printed).  Ends on SIGTERM, or after --lifetime
 * seconds (default 900) whatever happens.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { chunk_size = 256 * 1024 };

struct chunk {
  struct chunk *next;
  struct timespec release;
  size_t len; /* 0: end of stream */
  unsigned char data[];
};

struct pipe_dir { /* one direction: from -> to */
  int from, to;
  pthread_mutex_t lock;
  pthread_cond_t changed;
  struct chunk *head, *tail;
  size_t queued;
  int dead; /* the writer failed: the reader stops */
  struct conn *conn;
};

struct conn {
  pthread_mutex_t lock;
  int threads_left; /* 4: two readers, two writers */
  int a, b;
  struct pipe_dir up, down;
};

static long delay_ns;
static size_t max_queue = 256UL * 1024 * 1024;

static int parse_addr(const char *text, struct sockaddr_in *out) {
  char host[64];
  int port;
  memset(out, 0, sizeof *out);
  out->sin_family = AF_INET;
  if (sscanf(text, "%63[^:]:%d", host, &port) != 2 || port < 0 || port > 65535 ||
      inet_pton(AF_INET, host, &out->sin_addr) != 1)
    return -1;
  out->sin_port = htons((unsigned short)port);
  return 0;
}

static void release_conn(struct conn *c) {
  pthread_mutex_lock(&c->lock);
  int left = --c->threads_left;
  pthread_mutex_unlock(&c->lock);
  if (left > 0) return;
  close(c->a);
  close(c->b);
  struct pipe_dir *dirs[2] = {&c->up, &c->down};
  for (int i = 0; i < 2; ++i) {
    struct chunk *k = dirs[i]->head;
    while (k) {
      struct chunk *n = k->next;
      free(k);
      k = n;
    }
    pthread_mutex_destroy(&dirs[i]->lock);
    pthread_cond_destroy(&dirs[i]->changed);
  }
  pthread_mutex_destroy(&c->lock);
  free(c);
}

static void push(struct pipe_dir *d, struct chunk *k) {
  clock_gettime(CLOCK_MONOTONIC, &k->release);
  k->release.tv_nsec += delay_ns;
  k->release.tv_sec += k->release.tv_nsec / 1000000000L;
  k->release.tv_nsec %= 1000000000L;
  k->next = NULL;
  pthread_mutex_lock(&d->lock);
  if (d->tail) d->tail->next = k;
  else d->head = k;
  d->tail = k;
  d->queued += k->len;
  pthread_cond_signal(&d->changed);
  pthread_mutex_unlock(&d->lock);
}

static void *reader(void *arg) {
  struct pipe_dir *d = arg;
  for (;;) {
    pthread_mutex_lock(&d->lock);
    while (d->queued >= max_queue && !d->dead) pthread_cond_wait(&d->changed, &d->lock);
    int dead = d->dead;
    pthread_mutex_unlock(&d->lock);
    if (dead) break;
    struct chunk *k = malloc(sizeof *k + chunk_size);
    if (!k) break;
    ssize_t n;
    do n = recv(d->from, k->data, chunk_size, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0) { /* end of stream or error: forward the end after the delay */
      k->len = 0;
      push(d, k);
      break;
    }
    k->len = (size_t)n;
    if (n < 64 * 1024) {
      struct chunk *small = realloc(k, sizeof *k + (size_t)n);
      if (small) k = small;
    }
    push(d, k);
  }
  release_conn(d->conn);
  return NULL;
}

static void *writer(void *arg) {
  struct pipe_dir *d = arg;
  for (;;) {
    pthread_mutex_lock(&d->lock);
    while (!d->head) pthread_cond_wait(&d->changed, &d->lock);
    struct chunk *k = d->head;
    pthread_mutex_unlock(&d->lock);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &k->release, NULL) == EINTR) {}
    int failed = 0, end = k->len == 0;
    for (size_t off = 0; off < k->len && !failed;) {
      ssize_t n = send(d->to, k->data + off, k->len - off, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) failed = 1;
      else off += (size_t)n;
    }
    pthread_mutex_lock(&d->lock);
    d->head = k->next;
    if (!d->head) d->tail = NULL;
    d->queued -= k->len;
    if (failed) d->dead = 1;
    pthread_cond_broadcast(&d->changed);
    pthread_mutex_unlock(&d->lock);
    free(k);
    if (end) {
      shutdown(d->to, SHUT_WR);
      break;
    }
    if (failed) { /* wake the reader, which sees `dead` */
      shutdown(d->from, SHUT_RD);
      break;
    }
  }
  release_conn(d->conn);
  return NULL;
}

static void start(pthread_t *t, void *(*f)(void *), void *arg) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  if (pthread_create(t, &attr, f, arg) != 0) {
    perror("delay_relay: pthread_create");
    exit(1);
  }
  pthread_attr_destroy(&attr);
}

static void init_dir(struct pipe_dir *d, struct conn *c, int from, int to) {
  memset(d, 0, sizeof *d);
  d->from = from, d->to = to, d->conn = c;
  pthread_mutex_init(&d->lock, NULL);
  pthread_cond_init(&d->changed, NULL);
}

int main(int argc, char **argv) {
  struct sockaddr_in listen_at, target;
  int have_listen = 0, have_target = 0, lifetime = 900;
  double delay_ms = -1;
  for (int i = 1; i < argc; i += 2) {
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int good = v != NULL;
    if (good && !strcmp(argv[i], "--listen")) good = parse_addr(v, &listen_at) == 0, have_listen = 1;
    else if (good && !strcmp(argv[i], "--target")) good = parse_addr(v, &target) == 0, have_target = 1;
    else if (good && !strcmp(argv[i], "--delay-ms")) delay_ms = atof(v), good = delay_ms >= 0;
    else if (good && !strcmp(argv[i], "--max-queue")) max_queue = strtoul(v, NULL, 10), good = max_queue > 0;
    else if (good && !strcmp(argv[i], "--lifetime")) lifetime = atoi(v), good = lifetime > 0;
    else good = 0;
    if (!good) {
      fprintf(stderr, "delay_relay: bad argument %s%s%s\nusage: delay_relay --listen ADDR:PORT --target ADDR:PORT "
                      "--delay-ms D [--max-queue BYTES] [--lifetime S]\n", argv[i], v ? " " : "", v ? v : "");
      return 2;
    }
  }
  if (!have_listen || !have_target || delay_ms < 0) {
    fprintf(stderr, "usage: delay_relay --listen ADDR:PORT --target ADDR:PORT --delay-ms D [--max-queue BYTES] "
                    "[--lifetime S]\n");
    return 2;
  }
  delay_ns = (long)(delay_ms * 1e6);
  if (delay_ns >= 1000000000L) {
    fprintf(stderr, "delay_relay: --delay-ms %g: at most 999\n", delay_ms);
    return 2;
  }
  alarm((unsigned)lifetime);
  signal(SIGPIPE, SIG_IGN);

  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (lfd < 0 || bind(lfd, (struct sockaddr *)&listen_at, sizeof listen_at) != 0 || listen(lfd, 64) != 0) {
    char at[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &listen_at.sin_addr, at, sizeof at);
    fprintf(stderr, "delay_relay: cannot listen on %s:%d: %s\n", at, ntohs(listen_at.sin_port), strerror(errno));
    return 1;
  }
  socklen_t len = sizeof listen_at;
  getsockname(lfd, (struct sockaddr *)&listen_at, &len);
  char text[INET_ADDRSTRLEN];
  inet_ntop(AF_INET, &listen_at.sin_addr, text, sizeof text);
  printf("delay_relay: listening %s:%d\n", text, ntohs(listen_at.sin_port));
  fflush(stdout);

  for (;;) {
    int a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
    if (a < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      perror("delay_relay: accept");
      return 1;
    }
    int b = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (b < 0 || connect(b, (struct sockaddr *)&target, sizeof target) != 0) {
      fprintf(stderr, "delay_relay: cannot connect to the target: %s\n", strerror(errno));
      close(a);
      if (b >= 0) close(b);
      continue;
    }
    setsockopt(a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct conn *c = calloc(1, sizeof *c);
    if (!c) return 1;
    pthread_mutex_init(&c->lock, NULL);
    c->threads_left = 4;
    c->a = a, c->b = b;
    init_dir(&c->up, c, a, b);
    init_dir(&c->down, c, b, a);
    pthread_t t;
    start(&t, reader, &c->up);
    start(&t, writer, &c->up);
    start(&t, reader, &c->down);
    start(&t, writer, &c->down);
  }
}
