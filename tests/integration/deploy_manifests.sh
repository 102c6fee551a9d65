#!/usr/bin/env bash
# deploy/kubernetes/: each file is well-formed YAML with the objects docs/scaling.md names,
# runs `rtn serve --http` with a token file the server will accept (mode 0400) and the
# security context it needs. kubectl's client-side dry run needs an API server to discover
# kinds, so without one it is not run (a skip, named).
. "$(dirname "$0")/../lib.sh"

dir=$T_ROOT/deploy/kubernetes

yaml_ok() {
        python3 -c 'import yaml' 2>/dev/null || t_skip "python3-yaml is not installed"
        cat >"$T_TMP/check.py" <<'PY'
import sys, yaml
kinds = {}
for f in sys.argv[1:]:
    for d in yaml.safe_load_all(open(f)):
        kinds[d["kind"]] = d
for k in ("Secret", "Deployment", "Service", "SandboxTemplate"):
    assert k in kinds, f"no {k}"
for k, spec in (("Deployment", kinds["Deployment"]["spec"]["template"]["spec"]),
                ("SandboxTemplate", kinds["SandboxTemplate"]["spec"]["podTemplate"]["spec"])):
    c = spec["containers"][0]
    a = c["args"]
    assert a[0] == "serve" and "--http" in a and "--token-file" in a, f"{k}: {a}"
    assert c["image"].startswith("rtn:"), k
    sc = c["securityContext"]
    assert sc["seccompProfile"]["type"] == "Unconfined" and sc["procMount"] == "Unmasked", k
    assert not sc.get("privileged") and sc["allowPrivilegeEscalation"] is False, k
    tok = [v for v in spec["volumes"] if "secret" in v][0]["secret"]
    assert tok["defaultMode"] & 0o77 == 0, f"{k}: token readable by others"
print("manifests ok")
PY
        t_cmd python3 "$T_TMP/check.py" "$dir/rtn.yaml" "$dir/sandbox-template.yaml"
        t_exit_is 0
        t_stdout_has "manifests ok"
}

kubectl_dry_run() {
        command -v kubectl >/dev/null || t_skip "kubectl is not installed"
        timeout 20 kubectl version >/dev/null 2>&1 ||
                t_skip "kubectl --dry-run=client needs an API server for discovery; none reachable"
        t_exit_is 0 kubectl apply --dry-run=client -f "$dir/rtn.yaml"
}

t_run yaml_ok yaml_ok
t_run kubectl_dry_run kubectl_dry_run
t_done
