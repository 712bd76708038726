#ifndef CEPOLL_SHIM_H
#define CEPOLL_SHIM_H
// Linux's epoll and eventfd, which Swift's Glibc module does not export (SocketReadiness).
#include <sys/epoll.h>
#include <sys/eventfd.h>
#endif
