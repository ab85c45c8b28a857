"""The kubectl command table and dispatcher.

Each verb is declared once as a :class:`Cmd` (flags, usage, summary, examples,
handler); the same table drives parsing, ``kubectl <verb> --help`` and the
command reference shown to agents.
"""

from __future__ import annotations

from typing import Any

from ..errors import ApiError
from . import (
    kcreate,
    kdescribe,
    kdiff,
    kevents,
    kget,
    kmisc,
    kmutate,
    knodes,
    ksched,
    kwait,
)
from .kctx import K
from .spec import (
    GLOBAL_LONG,
    GLOBAL_SHORT,
    Cmd,
    Flag,
    KubectlError,
    UsageError,
    parse_flags,
    render_help,
)

__all__ = ["COMMANDS", "run_kubectl", "kubectl_reference"]

_A = Flag("all-namespaces", "A", "bool", False, "If present, list the requested object(s) across all namespaces.")
_L = Flag("selector", "l", "str", None, "Selector (label query) to filter on, supports '=', '==', '!=', 'in', 'notin'.")
_O = Flag("output", "o", "str", None, "Output format. One of: (json, yaml, name, wide, jsonpath=..., custom-columns=...).")
_ALL = Flag("all", "", "bool", False, "Select all resources in the namespace of the specified resource types.")
_F = Flag("filename", "f", "list", None, "Filename, directory, or URL to files; '-' reads the manifest from stdin (heredoc or pipe).")
_OVER = Flag("overwrite", "", "bool", False, "If true, allow values to be overwritten; otherwise reject updates that overwrite existing values.")
_DRY = Flag("dry-run", "", "str", "none", "Must be \"none\", \"server\", or \"client\" (accepted; has no effect here).")
_NOH = Flag("no-headers", "", "bool", False, "When using the default output format, don't print headers.")

_SPECS: list[Cmd] = [
    Cmd("get", "Display one or many resources.", "kubectl get TYPE[,TYPE...] [NAME...] [-n NS | -A] [-l SELECTOR] [--field-selector F] [-o wide|yaml|json|name|jsonpath=...|custom-columns=...] [--sort-by=JSONPATH] [--show-labels] [--no-headers]",
        (_A, _L, _O, _NOH, Flag("field-selector", "", "str", None, "Selector (field query) to filter on, e.g. status.phase=Running."),
         Flag("show-labels", "", "bool", False, "When printing, show all labels as the last column."),
         Flag("sort-by", "", "str", None, "Sort list types using this field specification (a JSONPath expression)."),
         Flag("watch", "w", "bool", False, "Watch for changes (not supported: the session is not interactive)."),
         Flag("watch-only", "", "bool", False, "Watch only (not supported)."),
         Flag("ignore-not-found", "", "bool", False, "If the requested object does not exist the command will return exit code 0."),
         Flag("show-kind", "", "bool", False, "If present, list the resource type for the requested object(s)."),
         Flag("label-columns", "L", "list", None, "Accepted for compatibility."),
         Flag("chunk-size", "", "str", "500", "Accepted for compatibility.")),
        ("kubectl get pods -n shop", "kubectl get pods -A -o wide", "kubectl get deploy,svc -n shop", "kubectl get pod web-1 -o yaml",
         "kubectl get pods -o jsonpath='{.items[*].metadata.name}'", "kubectl get events -n shop --sort-by=.lastTimestamp"),
        kget.cmd_get),
    Cmd("describe", "Show details of a specific resource or group of resources, including recent events.", "kubectl describe TYPE [NAME | -l SELECTOR] [-n NS]",
        (_A, _L, Flag("show-events", "", "bool", True, "If true, display events related to the described object.")),
        ("kubectl describe pod web-1 -n shop", "kubectl describe node node-1", "kubectl describe deploy/web"), kdescribe.cmd_describe),
    Cmd("logs", "Print the logs for a container in a pod.", "kubectl logs POD|TYPE/NAME [-c CONTAINER] [--tail=N] [--since=5m] [-p] [--timestamps] [-l SELECTOR]",
        (Flag("container", "c", "str", None, "Print the logs of this container."), Flag("tail", "", "int", -1, "Lines of recent log file to display."),
         Flag("previous", "p", "bool", False, "Print the logs for the previous instance of the container."),
         Flag("since", "", "str", None, "Only return logs newer than a relative duration like 5s, 2m, or 3h."),
         Flag("timestamps", "", "bool", False, "Include timestamps on each line."), Flag("follow", "f", "bool", False, "Follow (not supported)."),
         _L, Flag("all-containers", "", "bool", False, "Get all containers' logs in the pod(s)."),
         Flag("prefix", "", "bool", False, "Prefix each log line with the log source (pod name and container name)."),
         Flag("max-log-requests", "", "int", 5, "Maximum number of pods to read logs from with a selector.")),
        ("kubectl logs web-1 -n shop --tail=50", "kubectl logs web-1 -c app --previous", "kubectl logs deploy/web --since=10m"), kmisc.cmd_logs),
    Cmd("exec", "Execute a command in a container.", "kubectl exec POD|TYPE/NAME [-c CONTAINER] -- COMMAND [args...]",
        (Flag("container", "c", "str", None, "Container name."), Flag("stdin", "i", "bool", False, "Accepted; ignored."),
         Flag("tty", "t", "bool", False, "Accepted; ignored."), Flag("quiet", "q", "bool", False, "Accepted; ignored.")),
        ("kubectl exec web-1 -n shop -- env", "kubectl exec -it deploy/web -- cat /etc/config/app.yaml"), kmisc.cmd_exec),
    Cmd("top pod", "Display resource (CPU/memory) usage of pods.", "kubectl top pod [NAME] [-n NS | -A] [-l SELECTOR] [--sort-by=cpu|memory]",
        (_A, _L, _NOH, Flag("sort-by", "", "str", None, "cpu or memory."), Flag("containers", "", "bool", False, "Accepted; per-pod totals are shown.")),
        ("kubectl top pod -n shop --sort-by=memory",), kmisc.cmd_top_pod),
    Cmd("top node", "Display resource (CPU/memory) usage of nodes.", "kubectl top node [NAME] [-l SELECTOR] [--sort-by=cpu|memory]",
        (_L, _NOH, Flag("sort-by", "", "str", None, "cpu or memory.")), ("kubectl top nodes",), kmisc.cmd_top_node),
    Cmd("set env", "Update environment variables on a pod template.", "kubectl set env TYPE/NAME KEY=VALUE ... KEY- ... [-c CONTAINER] [--list]",
        (Flag("container", "c", "str", None, "The names of containers in the selected pod templates to change."), Flag("env", "e", "list", None, "Specify a key-value pair for an environment variable."),
         Flag("list", "", "bool", False, "If true, display the environment and any changes in the standard format."), _L, _ALL,
         Flag("overwrite", "", "bool", True, "If true, allow environment to be overwritten."), _DRY),
        ("kubectl set env deploy/web LOG_LEVEL=debug", "kubectl set env deploy/web DB_HOST-", "kubectl set env deploy/web --list"), kmutate.cmd_set_env),
    Cmd("set image", "Update the image of a pod template.", "kubectl set image TYPE/NAME CONTAINER=IMAGE ...",
        (_L, _ALL, _DRY), ("kubectl set image deploy/web web=registry.local/web:1.4.2",), kmutate.cmd_set_image),
    Cmd("set resources", "Update resource requests/limits on objects with pod templates.", "kubectl set resources TYPE/NAME [-c CONTAINER] [--limits=cpu=200m,memory=512Mi] [--requests=...]",
        (Flag("containers", "c", "str", "*", "The names of containers in the selected pod templates to change."), Flag("limits", "", "str", None, "The resource requirement limits, e.g. cpu=200m,memory=512Mi."),
         Flag("requests", "", "str", None, "The resource requirement requests."), _L, _ALL, _DRY),
        ("kubectl set resources deploy/web -c web --limits=memory=512Mi",), kmutate.cmd_set_resources),
    Cmd("patch", "Update fields of a resource using strategic merge patch, a JSON merge patch, or a JSON patch.", "kubectl patch TYPE NAME -p PATCH [--type strategic|merge|json]",
        (Flag("patch", "p", "str", None, "The patch to be applied to the resource JSON (or YAML) file."), Flag("type", "", "str", "strategic", "The type of patch being provided; one of [json merge strategic]."), _O, _DRY),
        ("kubectl patch deploy web -p '{\"spec\":{\"replicas\":3}}'", "kubectl patch svc web --type merge -p '{\"spec\":{\"selector\":{\"app\":\"web\"}}}'",
         "kubectl patch deploy web --type json -p '[{\"op\":\"remove\",\"path\":\"/spec/template/spec/containers/0/resources/limits\"}]'"), kmutate.cmd_patch),
    Cmd("scale", "Set a new size for a deployment, replica set or stateful set.", "kubectl scale TYPE NAME --replicas=COUNT",
        (Flag("replicas", "", "int", 0, "The new desired number of replicas. Required."), _L, _ALL, Flag("current-replicas", "", "int", -1, "Precondition (accepted; ignored)."), _DRY),
        ("kubectl scale deploy/web --replicas=3 -n shop",), kmutate.cmd_scale),
    Cmd("rollout status", "Show the status of the rollout.", "kubectl rollout status deploy/NAME",
        (Flag("watch", "w", "bool", True, "Accepted; the current status is printed once."), Flag("timeout", "", "str", "0s", "Accepted; ignored.")), ("kubectl rollout status deploy/web",), kmutate.cmd_rollout_status),
    Cmd("rollout restart", "Restart a resource (new pods via the restartedAt template annotation).", "kubectl rollout restart deploy/NAME", (_DRY,), ("kubectl rollout restart deploy/web -n shop",), kmutate.cmd_rollout_restart),
    Cmd("rollout undo", "Roll back to a previous rollout.", "kubectl rollout undo deploy/NAME [--to-revision=N]",
        (Flag("to-revision", "", "int", 0, "The revision to rollback to. Default to 0 (last revision)."), _DRY), ("kubectl rollout undo deploy/web", "kubectl rollout undo deploy/web --to-revision=2"), kmutate.cmd_rollout_undo),
    Cmd("rollout history", "View rollout history.", "kubectl rollout history deploy/NAME [--revision=N]",
        (Flag("revision", "", "int", 0, "See the details, including podTemplate of the revision specified."),), ("kubectl rollout history deploy/web",), kmutate.cmd_rollout_history),
    Cmd("rollout pause", "Mark the provided resource as paused.", "kubectl rollout pause deploy/NAME", (), (), kmutate.cmd_rollout_pause),
    Cmd("rollout resume", "Resume a paused resource.", "kubectl rollout resume deploy/NAME", (), (), kmutate.cmd_rollout_resume),
    Cmd("delete", "Delete resources by names or label selector.", "kubectl delete TYPE NAME... | TYPE -l SELECTOR [--force --grace-period=0]",
        (_L, _ALL, _F, Flag("field-selector", "", "str", None, "Selector (field query) to filter on, e.g. status.phase=Succeeded."),
         Flag("force", "", "bool", False, "Immediately remove resources from API and bypass graceful deletion."),
         Flag("grace-period", "", "int", -1, "Period of time in seconds given to the resource to terminate gracefully."),
         Flag("now", "", "bool", False, "Resources are signaled for immediate shutdown."), Flag("ignore-not-found", "", "bool", False, "Treat \"resource not found\" as a successful delete."),
         Flag("wait", "", "bool", True, "Accepted; ignored."), _DRY),
        ("kubectl delete pod web-1 -n shop", "kubectl delete pod web-1 --force --grace-period=0"), kmutate.cmd_delete),
    Cmd("cordon", "Mark node as unschedulable.", "kubectl cordon NODE", (_L, _DRY), ("kubectl cordon node-2",), knodes.cmd_cordon),
    Cmd("uncordon", "Mark node as schedulable.", "kubectl uncordon NODE", (_L, _DRY), ("kubectl uncordon node-2",), knodes.cmd_uncordon),
    Cmd("drain", "Drain node in preparation for maintenance (cordon, then evict its pods).", "kubectl drain NODE [--ignore-daemonsets] [--delete-emptydir-data] [--force]",
        (Flag("ignore-daemonsets", "", "bool", False, "Ignore DaemonSet-managed pods."), Flag("delete-emptydir-data", "", "bool", False, "Continue even if there are pods using emptyDir."),
         Flag("delete-local-data", "", "bool", False, "Deprecated alias of --delete-emptydir-data."), Flag("force", "", "bool", False, "Continue even if there are pods that do not declare a controller."),
         Flag("grace-period", "", "int", -1, "Accepted; ignored."), Flag("timeout", "", "str", "0s", "Accepted; ignored."), Flag("pod-selector", "", "str", None, "Label selector to filter pods on the node."), _L, _DRY),
        ("kubectl drain node-2 --ignore-daemonsets --delete-emptydir-data",), knodes.cmd_drain),
    Cmd("taint", "Update the taints on one or more nodes.", "kubectl taint nodes NODE KEY[=VALUE]:EFFECT | KEY[:EFFECT]-",
        (_OVER, _L, _ALL, _DRY), ("kubectl taint nodes node-1 dedicated=db:NoSchedule", "kubectl taint nodes node-1 dedicated:NoSchedule-"), knodes.cmd_taint),
    Cmd("label", "Update the labels on a resource.", "kubectl label TYPE NAME KEY=VAL ... KEY- ... [--overwrite]",
        (_OVER, _L, _ALL, Flag("list", "", "bool", False, "If true, display the labels for a given resource."), _DRY), ("kubectl label pod web-1 tier=frontend", "kubectl label pod web-1 tier-"), kmutate.cmd_label),
    Cmd("annotate", "Update the annotations on a resource.", "kubectl annotate TYPE NAME KEY=VAL ... KEY- ... [--overwrite]",
        (_OVER, _L, _ALL, Flag("list", "", "bool", False, "If true, display the annotations for a given resource."), _DRY), ("kubectl annotate deploy web owner=sre",), kmutate.cmd_annotate),
    Cmd("apply", "Apply a configuration to a resource from a manifest on stdin.", "kubectl apply -f - <<'EOF' ...yaml... EOF   |   echo '...yaml...' | kubectl apply -f -",
        (_F, Flag("validate", "", "str", "strict", "Accepted; ignored."), Flag("server-side", "", "bool", False, "Accepted; ignored."), _O, _DRY),
        ("kubectl apply -f - <<'EOF'\n  apiVersion: v1\n  kind: ConfigMap\n  ...\n  EOF",), kmutate.cmd_apply),
    Cmd("create", "Create a resource from a manifest on stdin.", "kubectl create -f - <<'EOF' ...yaml... EOF", (_F, _O, _DRY, Flag("validate", "", "str", "strict", "Accepted; ignored.")), (), kmutate.cmd_create),
    Cmd("create configmap", "Create a config map from literal values.", "kubectl create configmap NAME --from-literal=KEY=VALUE ...",
        (Flag("from-literal", "", "list", None, "Specify a key and literal value to insert in configmap (i.e. mykey=somevalue)."), Flag("from-file", "", "list", None, "Not available (no local files)."),
         Flag("from-env-file", "", "list", None, "Not available (no local files)."), _O, _DRY), ("kubectl create configmap app-cfg --from-literal=MODE=safe",), kmutate.cmd_create_configmap),
    Cmd("create secret generic", "Create a secret from literal values.", "kubectl create secret generic NAME --from-literal=KEY=VALUE ...",
        (Flag("from-literal", "", "list", None, "Specify a key and literal value to insert in secret."), Flag("from-file", "", "list", None, "Not available (no local files)."),
         Flag("from-env-file", "", "list", None, "Not available (no local files)."), Flag("type", "", "str", None, "The type of secret to create."), _O, _DRY),
        ("kubectl create secret generic db --from-literal=password=s3cret",), kmutate.cmd_create_secret_generic),
    Cmd("create namespace", "Create a namespace.", "kubectl create namespace NAME", (_O, _DRY), (), kmutate.cmd_create_namespace),
    Cmd("create priorityclass", "Create a priority class with the specified name and value.", "kubectl create priorityclass NAME --value=VALUE [--global-default] [--description=TEXT] [--preemption-policy=PreemptLowerPriority|Never]",
        (Flag("value", "", "int", 0, "The value of this priority class."), Flag("global-default", "", "bool", False, "Whether this priority class is the default for pods without one."),
         Flag("description", "", "str", None, "Description is an arbitrary string that usually provides guidelines on when this priority class should be used."),
         Flag("preemption-policy", "", "str", None, "The policy for preempting pods with lower priority (PreemptLowerPriority or Never)."), _O, _DRY),
        ("kubectl create priorityclass batch-low --value=-100 --preemption-policy=Never --description='spare capacity only'",), ksched.cmd_create_priorityclass),
    Cmd("create quota", "Create a resource quota with the specified name and hard limits.", "kubectl create quota NAME --hard=RESOURCE=QUANTITY[,...] [--scopes=SCOPE,...]",
        (Flag("hard", "", "str", None, "A comma-delimited set of resource=quantity pairs that define a hard limit."), Flag("scopes", "", "str", None, "A comma-delimited set of quota scopes."), _O, _DRY),
        ("kubectl create quota compute --hard=pods=40,requests.cpu=4",), ksched.cmd_create_quota),
    Cmd("autoscale", "Create an autoscaler that scales a deployment between MIN and MAX replicas on CPU utilisation.", "kubectl autoscale TYPE NAME|TYPE/NAME --max=MAXPODS [--min=MINPODS] [--cpu-percent=CPU] [--name=HPA]",
        (Flag("max", "", "int", -1, "The upper limit for the number of pods. Required."), Flag("min", "", "int", -1, "The lower limit for the number of pods."),
         Flag("cpu-percent", "", "int", -1, "The target average CPU utilization (as a percentage of the requested CPU) over all the pods."),
         Flag("name", "", "str", None, "The name for the newly created object."), _DRY),
        ("kubectl autoscale deployment/web --min=2 --max=6 --cpu-percent=60",), ksched.cmd_autoscale),
    Cmd("debug", "Create a debugging pod on a node and run a command on the host (host filesystem at /host).", "kubectl debug node/NAME [-it] [--image=busybox] -- COMMAND [args...]",
        (Flag("image", "", "str", None, "Container image to use for debug container."), Flag("stdin", "i", "bool", False, "Keep stdin open."), Flag("tty", "t", "bool", False, "Allocate a TTY."),
         Flag("profile", "", "str", "legacy", "Accepted; the legacy (privileged host) profile is used."), Flag("quiet", "q", "bool", False, "Accepted; ignored."),
         Flag("container", "c", "str", None, "Accepted; the container is named debugger."), Flag("attach", "", "bool", False, "Accepted; ignored.")),
        ("kubectl debug node/node-1 -it --image=busybox -- chroot /host journalctl -u kubelet --no-pager | tail -20",), kmisc.cmd_debug),
    Cmd("version", "Print the client and server version information.", "kubectl version [--client] [-o json|yaml]", (Flag("client", "", "bool", False, "If true, shows client version only."), _O), (), kmisc.cmd_version),
    Cmd("config current-context", "Display the current-context.", "kubectl config current-context", (), (), kmisc.cmd_config_current_context),
    Cmd("config get-contexts", "Describe one or many contexts.", "kubectl config get-contexts", (_O,), (), kmisc.cmd_config_get_contexts),
    Cmd("config view", "Display merged kubeconfig settings.", "kubectl config view", (_O, Flag("minify", "", "bool", False, "Accepted."), Flag("raw", "", "bool", False, "Accepted.")), (), kmisc.cmd_config_view),
    Cmd("config use-context", "Set the current-context.", "kubectl config use-context NAME", (), (), kmisc.cmd_config_use_context),
    Cmd("config set-context", "Set a context entry (use --current --namespace=NS to change the default namespace).", "kubectl config set-context --current --namespace=NS",
        (Flag("current", "", "bool", False, "Modify the current context."),), (), kmisc.cmd_config_set_context),
    Cmd("api-resources", "Print the supported API resources on the server.", "kubectl api-resources [--namespaced=true|false] [-o name]",
        (Flag("namespaced", "", "bool", True, "If false, non-namespaced resources will be returned."), _O), (), kmisc.cmd_api_resources),
    Cmd("explain", "Get documentation for a resource.", "kubectl explain TYPE[.FIELD]", (Flag("recursive", "", "bool", False, "Accepted."),), (), kmisc.cmd_explain),
    Cmd("auth can-i", "Check whether an action is allowed.", "kubectl auth can-i VERB TYPE", (Flag("list", "", "bool", False, "List all allowed actions."), Flag("as", "", "str", None, "Username to impersonate for the operation (system:serviceaccount:NAMESPACE:NAME)."), _A), ("kubectl auth can-i list deployments --as=system:serviceaccount:kube-system:kube-state-metrics",), kmisc.cmd_auth_can_i),
]

# imperative generators, wait, diff and events (sre_env.shell.kcreate / kwait / kdiff / kevents)
_SPECS += [
    Cmd("create deployment", "Create a deployment with the specified name.", "kubectl create deployment NAME --image=IMAGE [--replicas=N] [--port=PORT] [-- COMMAND [args...]]",
        (Flag("image", "", "list", None, "Image names to run. A deployment can have multiple images set for multi-container pod."),
         Flag("port", "", "int", -1, "The containerPort that this deployment exposes."), Flag("replicas", "r", "int", 1, "Number of replicas to create. Default is 1."), _O, _DRY),
        ("kubectl create deployment web --image=nginx --replicas=2 --port=80",), kcreate.cmd_create_deployment),
    Cmd("create service", "Create a service (clusterip, nodeport, loadbalancer or externalname) selecting pods labelled app=NAME.", "kubectl create service clusterip|nodeport|loadbalancer NAME --tcp=PORT[:TARGETPORT] [--clusterip=None] [--node-port=N] | externalname NAME --external-name=HOST",
        (Flag("tcp", "", "list", None, "Port pairs can be specified as '<port>:<targetPort>'."), Flag("clusterip", "", "str", None, "Assign your own ClusterIP or set to 'None' for a 'headless' service (no loadbalancing)."),
         Flag("node-port", "", "int", 0, "Port used to expose the service on each node in a cluster."), Flag("external-name", "", "str", None, "External name of service (externalname only)."), _O, _DRY),
        ("kubectl create service clusterip web --tcp=80:8080", "kubectl create service clusterip web-headless --clusterip=None"), kcreate.cmd_create_service),
    Cmd("create job", "Create a job with the specified name (from an image, or from a cron job's template).", "kubectl create job NAME --image=IMAGE [-- COMMAND [args...]] | kubectl create job NAME --from=cronjob/NAME",
        (Flag("image", "", "str", None, "Image name to run."), Flag("from", "", "str", None, "The name of the resource to create a Job from (only cronjob is supported)."), _O, _DRY),
        ("kubectl create job smoke --image=busybox -- date", "kubectl create job backup-now --from=cronjob/backup"), kcreate.cmd_create_job),
    Cmd("run", "Create and run a particular image in a pod.", "kubectl run NAME --image=IMAGE [--restart=Always|OnFailure|Never] [--env=K=V] [--labels=K=V,...] [--port=P] [--command] [--rm -i] [-- ARGS...]",
        (Flag("image", "", "str", None, "The image for the container to run."), Flag("restart", "", "str", "Always", "The restart policy for this Pod. Legal values [Always, OnFailure, Never]."),
         Flag("env", "", "list", None, "Environment variables to set in the container."), Flag("labels", "l", "str", None, "Comma separated labels to apply to the pod. Will override previous values."),
         Flag("port", "", "str", None, "The port that this container exposes."), Flag("command", "", "bool", False, "If true, use the extra arguments as the 'command' field in the container, rather than the 'args' field."),
         Flag("annotations", "", "list", None, "Annotations to apply to the pod."), Flag("image-pull-policy", "", "str", None, "The image pull policy for the container."),
         Flag("privileged", "", "bool", False, "If true, run the container in privileged mode."), Flag("overrides", "", "str", None, "Not available here."),
         Flag("stdin", "i", "bool", False, "Attach and show the command's output (a command after -- is required: no interactive shells)."),
         Flag("tty", "t", "bool", False, "Accepted; there is no terminal (kubectl warns)."),
         Flag("attach", "", "bool", False, "Wait for the pod to start and show the command's output."), Flag("rm", "", "bool", False, "Delete the pod after the attached command finishes."), _O, _DRY),
        ("kubectl run probe --rm -i --restart=Never --image=busybox -- wget -qO- -T 2 http://web:8080/healthz", "kubectl run dns --rm -i --restart=Never --image=busybox -- nslookup web"), kcreate.cmd_run),
    Cmd("expose", "Expose a deployment, replica set, pod or service as a new service.", "kubectl expose (deployment|rs|pod|service) NAME [--port=P] [--target-port=T] [--name=N] [--type=ClusterIP|NodePort|LoadBalancer] [--protocol=TCP] [--selector=K=V]",
        (Flag("port", "", "str", None, "The port that the service should serve on. Copied from the resource being exposed, if unspecified."),
         Flag("target-port", "", "str", None, "Name or number for the port on the container that the service should direct traffic to."),
         Flag("name", "", "str", None, "The name for the newly created object."), Flag("type", "", "str", None, "Type for this service: ClusterIP, NodePort, LoadBalancer, or ExternalName. Default is 'ClusterIP'."),
         Flag("protocol", "", "str", None, "The network protocol for the service to be created. Default is 'TCP'."),
         Flag("selector", "", "str", None, "A label selector to use for this service. Only equality-based selector requirements are supported."),
         Flag("labels", "l", "str", None, "Labels to apply to the service created by this call."), Flag("cluster-ip", "", "str", None, "ClusterIP to be assigned to the service. Leave empty to auto-allocate, or set to 'None' to create a headless service."), _O, _DRY),
        ("kubectl expose deployment web --port=80 --target-port=8080", "kubectl expose pod web-1 --port=8080 --name=web-debug"), kcreate.cmd_expose),
    Cmd("wait", "Wait for a specific condition on one or many resources (simulated time passes while waiting).", "kubectl wait --for=condition=COND[=VALUE]|delete|create|jsonpath='{EXPR}'[=VALUE] (TYPE/NAME... | TYPE -l SELECTOR | TYPE --all) [--timeout=30s]",
        (Flag("for", "", "str", None, "The condition to wait on: [create|delete|condition=condition-name[=condition-value]|jsonpath='{JSONPath expression}'=[JSONPath value]]. The default condition-value is true."),
         Flag("timeout", "", "str", "30s", "The length of time to wait before giving up. Zero means check once and don't wait (at most 10m here)."), _L, _ALL, _A,
         Flag("field-selector", "", "str", None, "Selector (field query) to filter on."), _O),
        ("kubectl wait --for=condition=Available deployment/web --timeout=120s", "kubectl wait --for=condition=Ready pod -l app=web --timeout=60s", "kubectl wait --for=delete pod/web-1 --timeout=60s",
         "kubectl wait --for=jsonpath='{.status.phase}'=Running pod/web-1"), kwait.cmd_wait),
    Cmd("diff", "Diff the live version against the would-be applied version (manifest on stdin).", "kubectl diff -f - <<'EOF' ...yaml... EOF",
        (_F, Flag("server-side", "", "bool", False, "Accepted; the apply merge is used."), Flag("force-conflicts", "", "bool", False, "Accepted; ignored.")),
        ("kubectl diff -f - <<'EOF'\n  apiVersion: apps/v1\n  kind: Deployment\n  ...\n  EOF",), kdiff.cmd_diff),
    Cmd("events", "List events (oldest first), optionally only those for one object or of one type.", "kubectl events [-n NS | -A] [--for TYPE/NAME] [--types=Normal,Warning] [--no-headers]",
        (_A, Flag("for", "", "str", None, "Filter events to only those pertaining to the specified resource."), Flag("types", "", "str", None, "Output only events of given types (Normal, Warning)."),
         _NOH, Flag("watch", "w", "bool", False, "Not available: the session is not interactive."), _O),
        ("kubectl events -n shop --for deploy/web", "kubectl events -A --types=Warning"), kevents.cmd_events),
]

COMMANDS: dict[str, Cmd] = {c.path: c.finalize() for c in _SPECS}
_GROUPS: dict[str, dict[str, str]] = {
    "rollout": {s: f"rollout {s}" for s in ("status", "restart", "undo", "history", "pause", "resume")},
    "set": {"env": "set env", "image": "set image", "resources": "set resources"},
    "config": {s: f"config {s}" for s in ("current-context", "get-contexts", "view", "use-context", "set-context")},
    "auth": {"can-i": "auth can-i"},
    "top": {"pod": "top pod", "pods": "top pod", "po": "top pod", "node": "top node", "nodes": "top node", "no": "top node"},
    "create": {"configmap": "create configmap", "cm": "create configmap", "namespace": "create namespace", "ns": "create namespace", "secret": "create secret generic",
               "priorityclass": "create priorityclass", "pc": "create priorityclass", "quota": "create quota", "resourcequota": "create quota",
               "deployment": "create deployment", "deploy": "create deployment", "service": "create service", "svc": "create service", "job": "create job"},
}
_OTHER_VERBS = ("edit", "attach", "port-forward", "proxy", "cp", "replace", "kustomize", "certificate", "cluster-info", "plugin", "completion", "alpha")
_COST = {"get": 2.0, "describe": 3.0, "logs": 3.0, "top pod": 2.0, "top node": 2.0}


def _first_positional(argv: list[str]) -> int:
    """Index of the first non-flag token, skipping the values of global flags (cobra's stripFlags)."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return -1
        if a.startswith("--") and len(a) > 2:
            name = a[2:].split("=", 1)[0]
            f = GLOBAL_LONG.get(name)
            i += 2 if (f and f.kind != "bool" and "=" not in a) else 1
            continue
        if a.startswith("-") and len(a) > 1:
            f = GLOBAL_SHORT.get(a[1])
            i += 2 if (f and f.kind != "bool" and len(a) == 2) else 1
            continue
        return i
    return -1


def _overview() -> str:
    lines = ["kubectl controls the Kubernetes cluster manager.", "", "Commands available in this environment:"]
    for c in COMMANDS.values():
        lines.append(f"  {c.path:<24}{c.summary}")
    lines += ["", "Usage:", "  kubectl [flags] [options]", "", 'Use "kubectl <command> --help" for more information about a given command.']
    return "\n".join(lines) + "\n"


def run_kubectl(ctx: Any, argv: list[str], stdin: str | None) -> tuple[str, str, int, float, bool, str | None]:
    """Run ``kubectl argv``: (stdout, stderr, exit code, cost seconds, mutated, both streams in write order)."""
    k = K(ctx, stdin)
    pos = _first_positional(argv)
    if pos < 0:
        if any(a in ("-h", "--help") for a in argv) or not argv:
            return _overview(), "", 0, 1.0, False, None
        try:
            parse_flags(COMMANDS["version"], argv)  # report a bad global flag like kubectl would
        except UsageError as exc:
            return "", exc.render().replace("kubectl version", "kubectl") + "\n", 1, 1.0, False, None
        return _overview(), "", 0, 1.0, False, None
    verb = argv[pos]
    rest = argv[:pos] + argv[pos + 1 :]
    if verb == "help":
        target = " ".join(a for a in rest if not a.startswith("-"))
        cmd = COMMANDS.get(target)
        return (render_help(cmd) if cmd else _overview()), "", 0, 1.0, False, None
    path = verb
    if verb in _GROUPS:
        sub_pos = _first_positional(rest)
        group = _GROUPS[verb]
        if sub_pos >= 0 and rest[sub_pos] in group:
            path = group[rest[sub_pos]]
            rest = rest[:sub_pos] + rest[sub_pos + 1 :]
            if path == "create secret generic":
                p2 = _first_positional(rest)
                if p2 >= 0 and rest[p2] == "generic":
                    rest = rest[:p2] + rest[p2 + 1 :]
                elif p2 >= 0 and rest[p2] in ("tls", "docker-registry"):
                    return "", f"error: 'kubectl create secret {rest[p2]}' is not supported here; use 'kubectl create secret generic'\n", 1, 1.0, False, None
                else:
                    return "", "error: Unknown secret type; use 'kubectl create secret generic NAME --from-literal=KEY=VALUE'\n", 1, 1.0, False, None
        elif verb == "create":
            path = "create"
        elif sub_pos >= 0:
            if any(a in ("-h", "--help") for a in rest):
                return _group_help(verb), "", 0, 1.0, False, None
            if verb == "top":
                return "", f'error: unknown command "{rest[sub_pos]}" for "kubectl top"\n', 1, 1.0, False, None
            return "", f'error: unknown command "{rest[sub_pos]}" for "kubectl {verb}"\n', 1, 1.0, False, None
        else:
            return _group_help(verb), "", 0 if any(a in ("-h", "--help") for a in rest) or verb != "top" else 0, 1.0, False, None
    cmd = COMMANDS.get(path)
    if cmd is None:
        if verb in _OTHER_VERBS:
            return "", f'error: "kubectl {verb}" is not available in this environment (see "kubectl help" for the supported commands)\n', 1, 1.0, False, None
        return "", f'error: unknown command "{verb}" for "kubectl"\n', 1, 1.0, False, None
    k.path = path
    try:
        k.p = parse_flags(cmd, rest)
        if k.p.opts.get("help"):
            return render_help(cmd), "", 0, 1.0, False, None
        ns = k.p.opts.get("namespace")
        if ns is not None:
            if ns == "":
                raise KubectlError("namespace must not be empty")
            k.namespace = ns
        k.now = k.backend.now
        k.cost = _COST.get(path, 2.0)
        assert cmd.handler is not None
        cmd.handler(k)
    except KubectlError as exc:
        k.err.append(exc.render() + "\n")
        k.code = exc.code
    except ApiError as exc:
        k.err.append(str(exc) + "\n")
        k.code = 1
    except ValueError as exc:  # selector syntax from the API layer
        k.err.append(f"error: {exc}\n")
        k.code = 1
    return "".join(k.out), "".join(k.err), k.code, k.cost, k.mutated, "".join(k.seq)


def _group_help(verb: str) -> str:
    subs = sorted({v for v in _GROUPS[verb].values()})
    lines = [f"Usage: kubectl {verb} SUBCOMMAND", "", "Available Commands:"]
    for s in subs:
        lines.append(f"  {s.split(' ', 1)[1]:<20}{COMMANDS[s].summary}")
    return "\n".join(lines) + "\n"


def kubectl_reference() -> list[str]:
    return [f"{c.usage}\n    {c.summary}" for c in COMMANDS.values()]
