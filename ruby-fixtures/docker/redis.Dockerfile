# Debian's redis-server, so the fleet needs no image registry beyond Debian's
# base image (bookworm: Redis 7.0, the version the local backend tests on).
ARG SUITE=bookworm
FROM debian:${SUITE}
ARG APT_OPTIONS=""
RUN apt-get ${APT_OPTIONS} update \
 && DEBIAN_FRONTEND=noninteractive apt-get ${APT_OPTIONS} install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/*
EXPOSE 6379
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--save", "", "--appendonly", "no", "--databases", "256"]
