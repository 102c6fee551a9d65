#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <string.h>
#include <unistd.h>
#include "netns/netns.h"
int netns_lo_up(struct rtn_error *err) {
        int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct ifreq ifr; memset(&ifr, 0, sizeof ifr); strcpy(ifr.ifr_name, "lo");
        ifr.ifr_flags = IFF_UP;
        int r = ioctl(s, SIOCSIFFLAGS, &ifr); close(s);
        return r < 0 ? rtn_err(err, errno, "lo up") : 0;
}
