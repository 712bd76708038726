"""Static checks of deploy/, fast enough for every `make test` (`make test-container`
builds the images and runs the compose stack with podman):

- every file deploy/Dockerfile copies from the build context exists;
- every subcommand the Dockerfile and compose.yaml run is in `landmark-remark --help`;
- compose.yaml parses, its services' depends_on name services, its bind mounts exist;
- every LR_* variable the service reads, and every one compose.yaml uses, is in
  .env.example, and compose.yaml passes each setting to the api service;
- nginx's client_max_body_size equals LR_BODY_LIMIT_BYTES's default;
- with --healthcheck-port, the image's HEALTHCHECK command passes against a
  live replica on that port, and fails against --closed-port.

Usage: deploy-checks.py BINARY [--healthcheck-port PORT --closed-port PORT]
Prints one line per problem; exits 1 when there is any.
"""
import glob
import json
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEPLOY = os.path.join(ROOT, "deploy")
problems = []


def problem(text):
    problems.append(text)
    print("  deploy: " + text)


def load_yaml(path):
    try:
        import yaml
    except ImportError:
        # pyenv's python may lack PyYAML where Debian's python3-yaml is installed.
        if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        raise SystemExit("PyYAML is missing (Debian: python3-yaml)")
    with open(path) as handle:
        return yaml.safe_load(handle)


def dockerfile_instructions(path):
    """(instruction, arguments) pairs, continuation lines joined, comments dropped."""
    lines, current = [], ""
    for raw in open(path):
        line = raw.rstrip("\n")
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        keyword, _, rest = current.strip().partition(" ")
        lines.append((keyword.upper(), rest.strip()))
        current = ""
    return lines


def exec_form(arguments):
    arguments = arguments.strip()
    if arguments.startswith("["):
        return json.loads(arguments)
    return shlex.split(arguments)


def subcommands(binary, path):
    """The SUBCOMMANDS listed by `binary path… --help`."""
    output = subprocess.run([binary, *path, "--help"], capture_output=True, text=True, timeout=30).stdout
    names, listing = set(), False
    for line in output.splitlines():
        if line.strip() == "SUBCOMMANDS:":
            listing = True
        elif listing and re.match(r"^  \S", line):
            names.add(line.split()[0])
        elif listing and line and not line.startswith(" "):
            listing = False
    return names


def check_command(binary, words, where):
    """The leading words that are subcommands must each be one, level by level."""
    path = []
    for word in words:
        if word.startswith("-"):
            break
        known = subcommands(binary, path)
        if not known:
            break  # a leaf command: the rest are its arguments
        if word not in known:
            problem(f"{where}: '{' '.join(path + [word])}' is not a subcommand of landmark-remark")
            return
        path.append(word)
    if not path:
        problem(f"{where}: runs no landmark-remark subcommand: {words}")


def check_dockerfile(binary):
    instructions = dockerfile_instructions(os.path.join(DEPLOY, "Dockerfile"))
    for keyword, arguments in instructions:
        if keyword in ("COPY", "ADD"):
            words = shlex.split(arguments)
            if any(word.startswith("--from") for word in words):
                continue
            sources = [word for word in words if not word.startswith("--")][:-1]
            if not any(glob.glob(os.path.join(ROOT, source)) for source in sources):
                problem(f"Dockerfile: {keyword} {arguments}: nothing to copy")
            for source in sources:
                if not glob.has_magic(source) and not os.path.exists(os.path.join(ROOT, source)):
                    problem(f"Dockerfile: {keyword} source {source} does not exist")
    entrypoint = [exec_form(a) for k, a in instructions if k == "ENTRYPOINT"]
    command = [exec_form(a) for k, a in instructions if k == "CMD"]
    if entrypoint != [["landmark-remark"]]:
        problem(f"Dockerfile: ENTRYPOINT should be the executable, is {entrypoint}")
    if command:
        check_command(binary, command[-1], "Dockerfile CMD")
    healthchecks = [a for k, a in instructions if k == "HEALTHCHECK"]
    if not healthchecks:
        problem("Dockerfile: no HEALTHCHECK")
        return None
    return exec_form(healthchecks[-1].split("CMD", 1)[1])


def check_compose(binary):
    path = os.path.join(DEPLOY, "compose.yaml")
    compose = load_yaml(path)
    services = compose.get("services", {})
    for name in ("db", "migrate", "api", "nginx"):
        if name not in services:
            problem(f"compose.yaml: no service {name}")
    if services.get("api", {}).get("deploy", {}).get("replicas", 1) < 2:
        problem("compose.yaml: api should run two replicas")
    for name, service in services.items():
        for dependency in (service.get("depends_on") or {}):
            if dependency not in services:
                problem(f"compose.yaml: {name} depends on unknown service {dependency}")
        for volume in service.get("volumes") or []:
            source = volume.split(":")[0]
            if source.startswith("."):
                if not os.path.exists(os.path.join(DEPLOY, source)):
                    problem(f"compose.yaml: {name} mounts {source}, which does not exist")
        build = service.get("build")
        if build:
            dockerfile = os.path.join(DEPLOY, build.get("context", "."), build.get("dockerfile", "Dockerfile"))
            if not os.path.exists(dockerfile):
                problem(f"compose.yaml: {name} builds from {dockerfile}, which does not exist")
        if service.get("image", "").startswith("landmark-remark") and "command" in service:
            check_command(binary, service["command"], f"compose.yaml service {name}")
    return compose


def check_settings(compose):
    compose_text = open(os.path.join(DEPLOY, "compose.yaml")).read()
    documented = set(re.findall(r"^#?\s*(LR_[A-Z0-9_]+)=", open(os.path.join(ROOT, ".env.example")).read(), re.M))
    read = set()
    for source in glob.glob(os.path.join(ROOT, "Sources", "**", "*.swift"), recursive=True):
        read |= set(re.findall(r'"(LR_[A-Z0-9_]+)"', open(source).read()))
    used = set(re.findall(r"\$\{(LR_[A-Z0-9_]+)", compose_text))
    for name in sorted((read | used) - documented):
        problem(f".env.example does not document {name}")
    # The image sets the paths of its own files; only the migrate service needs the owner's URL.
    passed = set(compose["services"].get("api", {}).get("environment") or {})
    for name in sorted(read - passed - {"LR_MIGRATIONS_DIR", "LR_OPENAPI_PATH", "LR_WEB_DIR", "LR_WEB_LEAFLET_DIR", "LR_MIGRATE_DATABASE_URL"}):
        problem(f"compose.yaml: the api service does not pass {name}")
    default = re.search(r"^LR_BODY_LIMIT_BYTES=(\d+)", open(os.path.join(ROOT, ".env.example")).read(), re.M)
    nginx = open(os.path.join(DEPLOY, "nginx", "snippets", "landmark-remark-locations.conf")).read()
    size = re.search(r"^client_max_body_size (\d+)([km]?);", nginx, re.M)
    if not default or not size:
        problem("cannot find LR_BODY_LIMIT_BYTES in .env.example or client_max_body_size in nginx")
    else:
        nginx_bytes = int(size.group(1)) * {"": 1, "k": 1024, "m": 1 << 20}[size.group(2)]
        if nginx_bytes != int(default.group(1)):
            problem(f"nginx client_max_body_size is {nginx_bytes} bytes, LR_BODY_LIMIT_BYTES {default.group(1)}")


def check_healthcheck(command, port, closed_port):
    def run(on_port):
        environment = dict(os.environ, LR_PORT=str(on_port))
        return subprocess.run(command, env=environment, timeout=10, capture_output=True).returncode
    if run(port) != 0:
        problem(f"the image's HEALTHCHECK fails against a live replica: {command}")
    if run(closed_port) == 0:
        problem("the image's HEALTHCHECK passes with nothing listening")


def main():
    binary, options = sys.argv[1], sys.argv[2:]
    healthcheck = check_dockerfile(binary)
    check_settings(check_compose(binary))
    if "--healthcheck-port" in options and healthcheck:
        port = options[options.index("--healthcheck-port") + 1]
        closed = options[options.index("--closed-port") + 1]
        check_healthcheck(healthcheck, port, closed)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
