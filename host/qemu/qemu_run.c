/* QEMU as a child that never outlives efipt qemu; see qemu_run.h. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/qemu/qemu_run.h"

/* the signal to pass on, set by the handler; the wait loop passes it on
 * (poll() returns at once with EINTR) */
static volatile sig_atomic_t got;

static void pass_on(int sig)
{
	got = sig;
}

static const int passed[] = { SIGTERM, SIGINT, SIGHUP };

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Pass QEMU's stderr on, keeping its last line that is not the plugin's. */
struct err_tail {
	char line[512];
	size_t n;
	char *last;
	size_t cap;
};

static void take(struct err_tail *t, const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] != '\n') {
			if (t->n + 1 < sizeof(t->line))
				t->line[t->n++] = p[i];
			continue;
		}
		t->line[t->n] = 0;
		if (t->n && strncmp(t->line, "efipt-qemu:", 11))
			snprintf(t->last, t->cap, "%s", t->line);
		t->n = 0;
	}
}

int qemu_run(char **argv, unsigned long long timeout_s, struct qemu_run *r)
{
	memset(r, 0, sizeof(*r));
	int fd[2];
	if (pipe2(fd, O_CLOEXEC)) {
		fprintf(stderr, "efipt qemu: pipe: %s\n", strerror(errno));
		return -1;
	}
	struct sigaction sa, old[3];
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pass_on;
	sigemptyset(&sa.sa_mask);
	got = 0;
	for (int i = 0; i < 3; i++)
		sigaction(passed[i], &sa, &old[i]);
	pid_t parent = getpid();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "efipt qemu: fork: %s\n", strerror(errno));
		close(fd[0]);
		close(fd[1]);
		for (int i = 0; i < 3; i++)
			sigaction(passed[i], &old[i], NULL);
		return -1;
	}
	if (!pid) {
		for (int i = 0; i < 3; i++)
			signal(passed[i], SIG_DFL);
		/* QEMU ends when efipt qemu does, however it ends (a kill -9,
		 * a crash): SIGTERM, so that the plugin still writes its files */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(128 + SIGTERM); /* the parent died before prctl */
		dup2(fd[1], 2);
		execvp(argv[0], argv);
		fprintf(stderr, "efipt qemu: %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fd[1]);
	struct err_tail tail = { .last = r->last_err, .cap = sizeof(r->last_err) };
	long long deadline = timeout_s ? now_ms() + (long long)timeout_s * 1000 : 0;
	long long kill_at = 0;	/* SIGKILL if SIGTERM did not end it by then */
	bool open = true;
	int ws = 0, sent = 0;
	for (;;) {
		pid_t w = waitpid(pid, &ws, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			fprintf(stderr, "efipt qemu: waitpid: %s\n", strerror(errno));
			ws = 0;
			break;
		}
		if (got && got != sent) {
			kill(pid, got);
			sent = got;
		}
		long long t = now_ms();
		if (deadline && t >= deadline && !r->timed_out) {
			r->timed_out = true;
			kill(pid, SIGTERM);
			kill_at = t + 10000;
		}
		if ((got || r->timed_out) && !kill_at)
			kill_at = t + 10000;
		if (kill_at && t >= kill_at) {
			kill(pid, SIGKILL);
			kill_at = t + 3600 * 1000ll;
		}
		int wait_ms = 200;
		if (deadline && !r->timed_out && deadline - t < wait_ms)
			wait_ms = (int)(deadline - t);
		struct pollfd p = { fd[0], POLLIN, 0 };
		int n = poll(&p, open ? 1 : 0, wait_ms < 0 ? 0 : wait_ms);
		if (n > 0 && open) {
			char buf[4096];
			ssize_t got_n = read(fd[0], buf, sizeof(buf));
			if (got_n > 0) {
				ssize_t off = 0;
				while (off < got_n) {
					ssize_t wr = write(2, buf + off, (size_t)(got_n - off));
					if (wr <= 0)
						break;
					off += wr;
				}
				take(&tail, buf, (size_t)got_n);
			} else if (got_n == 0 || errno != EINTR) {
				open = false;
			}
		}
	}
	/* what is left in the pipe (QEMU's last words) */
	char buf[4096];
	ssize_t n;
	while (open && (n = read(fd[0], buf, sizeof(buf))) > 0) {
		if (write(2, buf, (size_t)n) < 0)
			break;
		take(&tail, buf, (size_t)n);
	}
	take(&tail, "\n", 1);
	close(fd[0]);
	for (int i = 0; i < 3; i++)
		sigaction(passed[i], &old[i], NULL);
	r->signal = got;
	r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	return 0;
}
