# The canvasd image: a static canvasd (pure Go, CGO_ENABLED=0) on an empty
# base (FROM scratch), with CA certificates, a non-root user, /data as its
# volume and a health check. It needs no base image from a registry, so it
# builds offline; what it copies is gathered first by
# deploy/image-context.sh (the binary, Debian's CA bundle, passwd/group):
#
#   deploy/image-context.sh .image
#   buildah bud --isolation chroot --format docker -t canvasd .
#   # or: podman build --isolation=chroot --format docker -t canvasd .
#   # or: docker build -t canvasd .
#
# --format docker keeps the HEALTHCHECK, which the OCI format drops.
FROM scratch

COPY .image/etc/passwd .image/etc/group /etc/
COPY .image/etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY .image/canvasd /canvasd
COPY --chown=65532:65532 .image/data /data

USER 65532:65532
ENV CANVAS_ADDR=0.0.0.0:8080 \
    CANVAS_DATA=/data \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 CMD ["/canvasd", "healthcheck"]
ENTRYPOINT ["/canvasd"]
CMD ["serve"]
