# The team server: kit serve from this checkout, in a container (docs/team-server.md, "In a
# container"). compose.yaml runs it with its settings:
#   docker compose up --build
FROM python:3.12-slim

# The simulator's extra, installed from the checkout (the project is on no package index).
WORKDIR /src
COPY . .
RUN pip install --no-cache-dir '.[sim]'

# A user of its own, and the folder of the state file (--state), a volume kept across containers.
RUN useradd --create-home --uid 10001 kit \
    && mkdir -p /var/lib/kit \
    && chown kit:kit /var/lib/kit
USER kit
WORKDIR /var/lib/kit
VOLUME ["/var/lib/kit"]
EXPOSE 8000

# Bound beyond loopback, kit serve needs named partners (KIT_SIM_PARTNERS) and a control token
# (KIT_SIM_CONTROL_TOKEN) or --no-control, both from the environment; compose.yaml adds the
# dialect file and the names the server answers under (CMD). kit health asks /_sim/health with
# the token, or /openapi.json of a server without its control plane.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["kit", "health", "http://127.0.0.1:8000"]
ENTRYPOINT ["kit", "serve", "--host", "0.0.0.0", "--port", "8000", "--state", "/var/lib/kit/team.kitstate"]
CMD []
