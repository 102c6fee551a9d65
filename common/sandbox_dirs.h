/* The sandbox's directory tables and paths, one home for what rtn and rtn-init both need
 * (docs/architecture.md, step 6; docs/policy.md). Each list is an X-macro, X(name) per
 * directory, names relative to / without a leading slash, so a user can spell them bare
 * (`#define BARE(d) d,`) or absolute (`#define ABS(d) "/" d,`). Parents come before their
 * children: walking a list backwards is deepest first. */
#pragma once

/* The host directories a host base shows, each as an overlay of its own (step 6), and the
 * only ones Landlock lets a command read without a mount namespace (--isolation landlock). */
/* (clang-format reflows X-macro bodies differently on each run: the lists stay as written.) */
/* clang-format off */
#define RTN_HOST_BASE_DIRS(X) \
        X("usr") X("etc") X("opt") X("bin") X("sbin") X("lib") X("lib32") X("lib64") X("libx32")

/* The skeleton's mountpoints: the bottom layer of every root, so they never show up as
 * changes. */
#define RTN_SKELETON_DIRS(X) \
        X("dev") X("proc") X("sys") X("tmp") X("run") X("mnt") X("home") X("root") X("var") \
        X("var/tmp") X("workspace")

/* Host directories never bound into a sandbox, by anyone (docs/architecture.md, "Host
 * directory binds"): the system's own, whose contents the host runs or trusts. */
#define RTN_HOST_SYSTEM_DIRS(X) \
        X("bin") X("boot") X("dev") X("etc") X("lib") X("lib32") X("lib64") X("libx32") \
        X("proc") X("run") X("sbin") X("sys") X("usr") X("var") X("snap")

/* Credential stores below $HOME (docs/architecture.md, "Host directory binds"): never bound,
 * nor a directory holding one that is there, nor another name of one. Hidden directories of
 * $HOME are bound read-only otherwise (a toolchain's ~/.nvm, ~/.cargo/bin). Paths relative to
 * $HOME, compared without regard to case; a user adds names in
 * $XDG_CONFIG_HOME/rtn/credential-stores (runtime/sandbox/credstore.c) and removes none. A
 * toolchain directory bound for its cache often keeps the tool's login beside it (Maven's
 * settings.xml, Gradle's gradle.properties): that file is named, so the directory is refused
 * while it is there and its cache (~/.m2/repository) is not. */
#define RTN_HOME_CREDENTIAL_STORES(X) \
        X(".ssh") X(".gnupg") X(".aws") X(".azure") X(".config/gcloud") X(".config/gh") \
        X(".config/hub") X(".config/glab-cli") X(".docker") X(".kube") X(".netrc") \
        X(".git-credentials") X(".config/git/credentials") X(".npmrc") X(".pypirc") \
        X(".cargo/credentials") X(".cargo/credentials.toml") X(".gem/credentials") \
        X(".vault-token") X(".terraform.d/credentials.tfrc.json") X(".config/doctl") X(".oci") \
        X(".password-store") X(".local/share/keyrings") X(".gnome2/keyrings") X(".pki") \
        X(".config/op") X(".op") X(".config/Bitwarden") X(".config/Bitwarden CLI") \
        X(".local/share/keepassxc") X(".mozilla") X(".config/google-chrome") \
        X(".config/chromium") X(".config/rtn") X(".m2/settings.xml") \
        X(".m2/settings-security.xml") X(".gradle/gradle.properties") X(".ivy2/.credentials") \
        X(".composer/auth.json") X(".config/composer/auth.json") X(".config/containers/auth.json") \
        X(".config/rclone/rclone.conf") X(".config/sops") X(".claude/.credentials.json") \
        X(".codex/auth.json") X(".cache/huggingface/token") X(".huggingface/token") \
        X(".terraformrc") X(".pgpass") X(".my.cnf") X(".s3cfg") X(".boto")

/* Paths of the sandbox that rtn makes and relies on (docs/architecture.md, "Host directory
 * binds"): the pseudo-filesystems, the gate's CA bundle, the identity files. A bind lands
 * anywhere docker's -v would, but never on one of these, below one or on what holds one. */
#define RTN_SANDBOX_OWN_PATHS(X) \
        X("proc") X("sys") X("dev") X("run/rtn") X("etc/passwd") X("etc/group") \
        X("etc/hostname") X("etc/hosts")
/* clang-format on */

#define RTN_DIR_BARE(d) d,
#define RTN_DIR_ABS(d) "/" d,

/* The name of a sandbox's agent that is not uid 0, in the sandbox's own /etc/passwd and
 * /etc/group (runtime/sandbox/identity.c). */
#define RTN_SANDBOX_USER "rtn"

/* HOME of a sandbox's agent that is not uid 0 (uid 0's is /root). */
#define RTN_SANDBOX_HOME "/home/rtn"

/* PATH of a command whose environment gives none: the spec's default and rtn-init's PATH
 * search. */
#define RTN_SANDBOX_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
