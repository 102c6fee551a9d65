#!/usr/bin/env bash
# deploy/kubernetes/: each file is well-formed YAML with the objects docs/scaling.md names,
# runs `rtn serve --http` with a token file the server will accept (mode 0400) and the
# security context it needs. kubectl's client-side dry run needs an API server to discover
# kinds, so without one it is not run (a skip, named). The SandboxTemplate is checked against
# the CRD of kubernetes-sigs/agent-sandbox (tests/containers/agent-sandbox/, fetched once, its
# source named there): its apiVersion is one the CRD serves, and it validates against that
# version's schema with unknown fields refused (as kubectl --validate=strict does; the API
# server would drop them silently). docs/containers.md.
. "$(dirname "$0")/../lib.sh"

dir=$T_ROOT/deploy/kubernetes

# The checkers below say when a module they need is missing (exit 77, this on stderr) rather
# than a probe starting python3 once more before each: the case is then skipped.
NO_MODULE='a module the check needs is not installed'

yaml_ok() {
        cat >"$T_TMP/check.py" <<'PY'
import sys
try:
    import yaml
except ImportError:
    print("a module the check needs is not installed", file=sys.stderr)
    sys.exit(77)
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
    assert sc["seccompProfile"]["type"] == "Unconfined", k
    assert not sc.get("privileged") and sc["allowPrivilegeEscalation"] is False, k
    tok = [v for v in spec["volumes"] if "secret" in v][0]["secret"]
    assert tok["defaultMode"] & 0o77 == 0, f"{k}: token readable by others"
print("manifests ok")
PY
        t_cmd python3 "$T_TMP/check.py" "$dir/rtn.yaml" "$dir/sandbox-template.yaml"
        [ "$T_RC" = 77 ] && t_has "$T_ERR_FILE" "$NO_MODULE" && t_skip "python3-yaml is not installed"
        t_exit_is 0
        t_stdout_has "manifests ok"
}

kubectl_dry_run() {
        command -v kubectl >/dev/null || t_skip "kubectl is not installed"
        timeout 20 kubectl version >/dev/null 2>&1 ||
                t_skip "kubectl --dry-run=client needs an API server for discovery; none reachable"
        t_exit_is 0 kubectl apply --dry-run=client -f "$dir/rtn.yaml"
}

crd=$T_ROOT/tests/containers/agent-sandbox/sandboxtemplates.crd.yaml

# check MANIFEST: t_cmd of the check, its findings on stdout.
check() {
        cat >"$T_TMP/check.py" <<'PY'
import sys
try:
    import yaml, jsonschema
except ImportError:
    print("a module the check needs is not installed", file=sys.stderr)
    sys.exit(77)

crd = yaml.safe_load(open(sys.argv[1]))
doc = yaml.safe_load(open(sys.argv[2]))
group = crd["spec"]["group"]
served = {f"{group}/{v['name']}": v for v in crd["spec"]["versions"] if v.get("served")}
if doc.get("kind") != crd["spec"]["names"]["kind"] or doc.get("apiVersion") not in served:
    sys.exit(f"{doc.get('apiVersion')} {doc.get('kind')}: the CRD serves {sorted(served)}")

def strict(s):
    # An object schema with properties and no additionalProperties: unknown fields refused.
    if isinstance(s, dict):
        if s.get("type") == "object" and "properties" in s and "additionalProperties" not in s:
            s["additionalProperties"] = False
        for v in s.values():
            strict(v)
    elif isinstance(s, list):
        for v in s:
            strict(v)

schema = served[doc["apiVersion"]]["schema"]["openAPIV3Schema"]
strict(schema)
errors = list(jsonschema.Draft7Validator(schema).iter_errors(doc))
for e in errors:
    print("/".join(map(str, e.absolute_path)) + ": " + e.message)
sys.exit(1 if errors else 0)
PY
        t_cmd python3 "$T_TMP/check.py" "$crd" "$1"
        [ "$T_RC" = 77 ] && t_has "$T_ERR_FILE" "$NO_MODULE" &&
                t_skip "python3-yaml or python3-jsonschema is not installed (tools/deps.txt)"
        return 0
}

template_valid() {
        check "$T_ROOT/deploy/kubernetes/sandbox-template.yaml"
        [ "$T_RC" = 0 ] || t_fail "sandbox-template.yaml: $(head -c 800 "$T_OUT_FILE" "$T_ERR_FILE")"
}

# The checker refuses what the API server would not take: a field the CRD does not have.
template_checker_refuses() {
        sed 's/^  podTemplate:/  podTemplat:/' "$T_ROOT/deploy/kubernetes/sandbox-template.yaml" >"$T_TMP/bad.yaml"
        t_true grep -q podTemplat: "$T_TMP/bad.yaml"
        check "$T_TMP/bad.yaml"
        t_exit_is 1
        t_stdout_has "spec: Additional properties are not allowed ('podTemplat' was unexpected)"
        sed 's/^    spec:/    spek:/' "$T_ROOT/deploy/kubernetes/sandbox-template.yaml" >"$T_TMP/bad.yaml"
        check "$T_TMP/bad.yaml"
        t_exit_is 1
}

t_run yaml_ok yaml_ok
t_run kubectl_dry_run kubectl_dry_run
t_run sandbox_template_valid template_valid
t_run sandbox_template_checker_refuses template_checker_refuses
t_done
