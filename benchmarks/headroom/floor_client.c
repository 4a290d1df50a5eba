// floor_client.c: the lower bound of "client lag" on this host. A minimal C streaming client
// (keep-alive HTTP/1.1, epoll, no allocation per event, no JSON parse) sends the same waves as
// benchmarks/headroom (W requests at once, the next wave when all have ended) to the same `ik mock`,
// and stamps CLOCK_REALTIME when the first non-empty `"content":"` of each response is in hand.
// Request i's prompt has i+1 words, so the driver (floor.ts) pairs it with the mock's request log
// line by prompt length and computes lag = client stamp − (recv_wall_ms + first_ms), exactly as
// benchmarks/headroom does for ik's client.
//
//   gcc -O2 -o floor_client floor_client.c
//   ./floor_client PORT CONCURRENCY REQUESTS MAX_TOKENS
// Prints one line per request: "i send_wall_ms first_wall_ms".
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct {
  int fd, req, got_first, done;
  char tail[16];
  int tail_len;
} conn_t;

static double *send_ms, *first_ms;
static char body[1 << 16], reqbuf[1 << 17];

static int connect_to(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); exit(1); }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

static void send_req(conn_t *c, int i, int max_tokens) {
  int n = snprintf(body, sizeof body,
                   "{\"model\":\"mock-model\",\"stream\":true,\"max_tokens\":%d,\"messages\":[{\"role\":\"user\",\"content\":\"",
                   max_tokens);
  for (int w = 0; w <= i; w++) n += snprintf(body + n, sizeof body - n, "w ");
  n += snprintf(body + n, sizeof body - n, "\"}]}");
  int m = snprintf(reqbuf, sizeof reqbuf,
                   "POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                   "Content-Length: %d\r\n\r\n%s",
                   n, body);
  c->req = i; c->got_first = 0; c->done = 0; c->tail_len = 0;
  for (int off = 0; off < m;) {
    ssize_t k = write(c->fd, reqbuf + off, m - off);
    if (k < 0) { if (errno == EINTR) continue; perror("write"); exit(1); }
    off += k;
  }
  send_ms[i] = wall_ms();
}

// The first `"content":"X` with X != '"' in the bytes read so far (a split across reads is
// handled by keeping the last 15 bytes).
static const char NEEDLE[] = "\"content\":\"";

static void on_bytes(conn_t *c, const char *buf, ssize_t n) {
  static char scan[1 << 17];
  int len = c->tail_len;
  memcpy(scan, c->tail, len);
  memcpy(scan + len, buf, n);
  len += n;
  if (!c->got_first) {
    for (const char *p = scan; (p = memmem(p, scan + len - p, NEEDLE, sizeof NEEDLE - 1)); p++) {
      const char *v = p + sizeof NEEDLE - 1;
      if (v < scan + len && *v != '"') { first_ms[c->req] = wall_ms(); c->got_first = 1; break; }
    }
  }
  if (memmem(scan, len, "\r\n0\r\n\r\n", 7)) c->done = 1;
  int keep = len < 15 ? len : 15;
  memcpy(c->tail, scan + len - keep, keep);
  c->tail_len = keep;
}

int main(int argc, char **argv) {
  if (argc < 5) { fprintf(stderr, "usage: floor_client PORT CONC REQUESTS MAX_TOKENS\n"); return 64; }
  int port = atoi(argv[1]), conc = atoi(argv[2]), requests = atoi(argv[3]), max_tokens = atoi(argv[4]);
  send_ms = calloc(requests, sizeof(double));
  first_ms = calloc(requests, sizeof(double));
  conn_t *cs = calloc(conc, sizeof(conn_t));
  int ep = epoll_create1(0);
  for (int k = 0; k < conc; k++) {
    cs[k].fd = connect_to(port);
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = &cs[k]};
    epoll_ctl(ep, EPOLL_CTL_ADD, cs[k].fd, &e);
  }
  static char buf[1 << 16];
  struct epoll_event evs[512];
  for (int w = 0; w < requests; w += conc) {
    int width = requests - w < conc ? requests - w : conc, open = width;
    for (int k = 0; k < width; k++) send_req(&cs[k], w + k, max_tokens);
    while (open > 0) {
      int n = epoll_wait(ep, evs, 512, 30000);
      if (n <= 0) { fprintf(stderr, "floor_client: timeout\n"); return 1; }
      for (int j = 0; j < n; j++) {
        conn_t *c = evs[j].data.ptr;
        ssize_t k = read(c->fd, buf, sizeof buf);
        if (k <= 0) { fprintf(stderr, "floor_client: connection closed\n"); return 1; }
        int was = c->done;
        on_bytes(c, buf, k);
        if (c->done && !was) open--;
      }
    }
  }
  for (int i = 0; i < requests; i++) printf("%d %.3f %.3f\n", i, send_ms[i], first_ms[i]);
  return 0;
}
