//! Tests of the playground's kubectl: parsing and error messages (table-driven), printed tables
//! and descriptions (insta snapshots from a deterministic world: `Session::new(seed)`, an apply,
//! `advance_to`), and world tests of what the commands do to the cluster.

use crate::sim::api::types::{Kind, ObjectKey};
use crate::sim::controllers::deployment::util::REVISION_ANNOTATION;
use crate::sim::kubectl::CommandOutput;
use crate::sim::session::Session;

use super::drain::Stream;

const WEB: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  replicas: 3
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
        ports: [{containerPort: 80}]
        resources: {requests: {cpu: 100m, memory: 128Mi}}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 80}]
";

/// A three-node cluster running `web` (3 replicas) and its Service, settled at 60 s.
fn world() -> Session {
    world_with(WEB, 60_000)
}

fn world_with(text: &str, until: u64) -> Session {
    let mut s = Session::new(7);
    let r = s.apply_text("web.yaml", text);
    assert!(r.ok, "{r:?}");
    s.advance_to(until, usize::MAX);
    s
}

fn run(s: &mut Session, cmd: &str) -> CommandOutput {
    s.kubectl(cmd)
}

fn stdout(s: &mut Session, cmd: &str) -> String {
    let o = run(s, cmd);
    assert!(
        o.ok,
        "kubectl {cmd}\nstdout: {}\nstderr: {}",
        o.stdout, o.stderr
    );
    o.stdout
}

/// The first column of a table's rows (names, or the one custom column).
fn first_column(s: &mut Session, cmd: &str) -> Vec<String> {
    stdout(s, cmd)
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap_or_default().to_string())
        .collect()
}

fn pods_of(s: &Session, label: &str) -> Vec<crate::sim::api::types::Pod> {
    s.sim
        .api()
        .list(Kind::Pod)
        .filter_map(|o| o.as_pod())
        .filter(|p| p.metadata.labels.get("app").map(|v| v.as_str()) == Some(label))
        .cloned()
        .collect()
}

fn deployment(s: &Session, name: &str) -> crate::sim::api::types::Deployment {
    s.sim
        .api()
        .get(&ObjectKey::new(Kind::Deployment, "default", name))
        .and_then(|o| o.as_deployment())
        .cloned()
        .expect("the deployment exists")
}

// ------------------------------------------------------------------ errors, table-driven

#[test]
fn mistakes_get_kubectls_exact_errors() {
    let mut s = world();
    let pod = pods_of(&s, "web")[0].metadata.name.clone();
    let cases: Vec<(String, &str)> = vec![
        ("frob".into(), "error: unknown command \"frob\" for \"kubectl\"\n"),
        (
            "get deploymentz".into(),
            "error: the server doesn't have a resource type \"deploymentz\"\n",
        ),
        (
            "get pods --foo".into(),
            "error: unknown flag: --foo\nSee 'kubectl get --help' for usage.\n",
        ),
        (
            "get deploy webb".into(),
            "Error from server (NotFound): deployments.apps \"webb\" not found\n",
        ),
        (
            "describe deployment webb".into(),
            "Error from server (NotFound): deployments.apps \"webb\" not found\n",
        ),
        (
            "scale deployment web".into(),
            "error: required flag(s) \"replicas\" not set\n",
        ),
        (
            "scale deployment web --replicas=three".into(),
            "error: invalid argument \"three\" for \"--replicas\" flag: strconv.ParseInt: parsing \"three\": invalid syntax\nSee 'kubectl scale --help' for usage.\n",
        ),
        (
            "delete deployment web --cascade=sideways".into(),
            "error: invalid cascade value (sideways). Must be \"background\", \"foreground\", or \"orphan\"\n",
        ),
        (
            format!("label pod {pod} app=other"),
            "error: 'app' already has a value (web), and --overwrite is false\n",
        ),
        (
            "patch deployment web --type=json -p '[{\"op\":\"replace\",\"path\":\"/spec/nope\",\"value\":1}]'".into(),
            "The request is invalid: jsonpatch replace operation does not apply: doc is missing key: /spec/nope: missing value\n",
        ),
        (
            "patch deployment web -p '{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"image\":\"nginx:1.28\"}]}}}}'".into(),
            "Error from server: map: map[image:nginx:1.28] does not contain declared merge key: name\n",
        ),
        (
            "rollout undo deployment/web --to-revision=5".into(),
            "error: unable to find specified revision 5 in history\n",
        ),
        (
            "rollout resume deployment/web".into(),
            "error: deployments.apps \"web\" is not paused\n",
        ),
        (
            "create deployment --image=nginx".into(),
            "error: exactly one NAME is required, got 0\nSee 'kubectl create deployment -h' for help and examples\n",
        ),
        (
            "create deployment api".into(),
            "error: required flag(s) \"image\" not set\n",
        ),
        (
            "drain".into(),
            "error: USAGE: drain NODE [flags]\nSee 'kubectl drain -h' for help and examples\n",
        ),
        (
            "drain node-9".into(),
            "Error from server (NotFound): nodes \"node-9\" not found\n",
        ),
        (
            "cordon node-9".into(),
            "Error from server (NotFound): nodes \"node-9\" not found\n",
        ),
        ("wait deployment/web".into(), "error: --for must be specified\n"),
        (
            "drain node-1 --ignore-daemonset".into(),
            "error: unknown flag: --ignore-daemonset\nSee 'kubectl drain --help' for usage.\n",
        ),
        (
            "rollout status deployment/web --to-revision=1".into(),
            "error: unknown flag: --to-revision\nSee 'kubectl rollout status --help' for usage.\n",
        ),
        (
            "create deployment api --imag=nginx".into(),
            "error: unknown flag: --imag\nSee 'kubectl create deployment --help' for usage.\n",
        ),
        (
            "delete pod x --grace-period=soon".into(),
            "error: invalid argument \"soon\" for \"--grace-period\" flag: strconv.ParseInt: parsing \"soon\": invalid syntax\nSee 'kubectl delete --help' for usage.\n",
        ),
        (
            "-n kube-system get po -x".into(),
            "error: unknown shorthand flag: 'x' in -x\nSee 'kubectl get --help' for usage.\n",
        ),
        (
            "set image deployment/web php=php:8".into(),
            "error: unable to find container named \"php\"\n",
        ),
        (
            "explain pods.spec.nope".into(),
            "error: field \"nope\" does not exist\n",
        ),
        (
            "get pods -w".into(),
            "error: --watch is not supported in the playground: every view updates live as simulated time runs; run get again to see the latest state\n",
        ),
    ];
    for (cmd, want) in cases {
        let o = run(&mut s, &cmd);
        assert!(!o.ok, "kubectl {cmd} should fail");
        assert_eq!(o.stderr, want, "kubectl {cmd}");
    }
}

#[test]
fn every_command_of_the_subset_parses_and_runs() {
    let mut s = world();
    let cmds = [
        "get pods",
        "get po -o wide -l app=web",
        "-n default get deploy,rs",
        "get pods --field-selector=spec.nodeName=node-1",
        "get svc web -o name",
        "get endpointslices",
        "get nodes --show-labels",
        "get nodes -L kubernetes.io/os",
        "get events --sort-by=.lastTimestamp",
        "get deploy web -o jsonpath='{.status.readyReplicas}'",
        "get deploy web -o json",
        "get deploy web -o yaml",
        "get all -A",
        "describe pods",
        "describe svc web",
        "describe node node-1",
        "events",
        "events --for deployment/web",
        "version",
        "cluster-info",
        "api-resources",
        "api-resources --namespaced=false -o name",
        "rollout status deployment/web",
        "rollout history deploy/web",
        "rollout history deploy/web --revision=1",
        "annotate deployment web kubernetes.io/change-cause='first release'",
        "label node node-1 disk=ssd",
        "taint nodes node-1 dedicated=batch:NoSchedule",
        "taint nodes node-1 dedicated:NoSchedule-",
        "patch deployment web --type=merge -p '{\"spec\":{\"minReadySeconds\":1}}'",
        "wait deployment/web --for=condition=Available --timeout=1m",
        "wait pods -l app=web --for=condition=Ready",
        "create deployment api --image=registry.k8s.io/pause:3.10 --replicas=2 --port=8080",
        "expose deployment api --port=80 --target-port=8080",
        "run toolbox --image=busybox:1.36",
        "scale deployment api --replicas=1",
        "delete service api",
    ];
    for cmd in cmds {
        let o = run(&mut s, cmd);
        assert!(
            o.ok,
            "kubectl {cmd}\nstdout: {}\nstderr: {}",
            o.stdout, o.stderr
        );
        assert!(!o.stdout.is_empty(), "kubectl {cmd} printed nothing");
    }
}

// ------------------------------------------------------------------ get and describe snapshots

#[test]
fn get_tables_match_kubectls_columns() {
    let mut s = world();
    let mut text = String::new();
    for cmd in [
        "get pods -o wide",
        "get deployments -o wide",
        "get rs -o wide",
        "get nodes -o wide",
        "get svc -o wide",
        "get endpointslices",
        "get all",
        "get pods -A --show-labels",
        "get deploy web -o name",
    ] {
        text.push_str(&format!("$ kubectl {cmd}\n{}\n", stdout(&mut s, cmd)));
    }
    insta::assert_snapshot!(text);
}

#[test]
fn get_events_lists_in_api_order_like_kubectl() {
    let mut s = world();
    insta::assert_snapshot!(stdout(&mut s, "get events"));
}

#[test]
fn empty_results_say_no_resources_found_on_stderr() {
    let mut s = world();
    let o = run(&mut s, "get pdb");
    assert!(o.ok);
    assert_eq!(o.stdout, "");
    assert_eq!(o.stderr, "No resources found in default namespace.\n");
    let o = run(&mut s, "get pods -n kube-system");
    assert_eq!(o.stderr, "No resources found in kube-system namespace.\n");
}

#[test]
fn single_objects_print_bare_and_lists_print_as_list() {
    let mut s = world();
    assert!(stdout(&mut s, "get deploy web -o yaml")
        .starts_with("apiVersion: apps/v1\nkind: Deployment\n"));
    let list = stdout(&mut s, "get deploy -o yaml");
    assert!(list.starts_with("apiVersion: v1\nitems:\n"), "{list}");
    assert!(
        stdout(&mut s, "get deploy web -o json").starts_with("{\n    \"apiVersion\": \"apps/v1\",")
    );
    assert_eq!(
        stdout(&mut s, "get deploy web -o jsonpath={.spec.replicas}"),
        "3"
    );
}

#[test]
fn describe_matches_kubectls_sections() {
    let mut s = world();
    let pod = pods_of(&s, "web")[0].metadata.name.clone();
    let rs = s
        .sim
        .api()
        .list(Kind::ReplicaSet)
        .next()
        .expect("an RS")
        .meta()
        .name
        .clone();
    let mut text = String::new();
    for cmd in [
        format!("describe pod {pod}"),
        "describe deployment web".into(),
        format!("describe rs {rs}"),
        "describe node node-1".into(),
        "describe service web".into(),
    ] {
        text.push_str(&format!("$ kubectl {cmd}\n{}\n", stdout(&mut s, &cmd)));
    }
    insta::assert_snapshot!(text);
}

const PDB_TIGHT: &str = "---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web-pdb}
spec:
  minAvailable: 10
  selector: {matchLabels: {app: web}}
";

#[test]
fn describe_pdb_and_get_pdb_show_the_budget() {
    let mut s = world_with(&format!("{WEB}{PDB_TIGHT}"), 60_000);
    let text = format!(
        "{}\n{}",
        stdout(&mut s, "get pdb"),
        stdout(&mut s, "describe pdb web-pdb")
    );
    insta::assert_snapshot!(text);
}

const HUGE: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: huge}
spec:
  replicas: 1
  selector: {matchLabels: {app: huge}}
  template:
    metadata: {labels: {app: huge}}
    spec:
      containers:
      - name: app
        image: nginx:1.27
        resources: {requests: {cpu: '16'}}
";

#[test]
fn a_pending_pod_describes_its_failed_scheduling_events_with_repeat_counts() {
    let mut s = world_with(HUGE, 660_000);
    let pod = pods_of(&s, "huge")[0].metadata.name.clone();
    let text = stdout(&mut s, &format!("describe pod {pod}"));
    assert!(text.contains("Warning  FailedScheduling"), "{text}");
    assert!(text.contains("0/3 nodes are available"), "{text}");
    insta::assert_snapshot!(text);
}

// ------------------------------------------------------------------ create, label, set image, rollout

#[test]
fn create_service_builds_the_service_kubectl_builds() {
    let mut s = world();
    assert_eq!(
        stdout(&mut s, "create service clusterip api --tcp=80:8080,443"),
        "service/api created\n"
    );
    let key = ObjectKey::new(Kind::Service, "default", "api");
    let svc = s
        .sim
        .api()
        .get(&key)
        .and_then(|o| o.as_service().cloned())
        .expect("created");
    assert_eq!(
        svc.spec.selector.get("app").map(|v| v.as_str()),
        Some("api")
    );
    assert_eq!(
        svc.metadata.labels.get("app").map(|v| v.as_str()),
        Some("api")
    );
    let ports: Vec<_> = svc
        .spec
        .ports
        .iter()
        .map(|p| {
            (
                p.name.clone().unwrap_or_default(),
                p.port,
                p.target_port.clone(),
            )
        })
        .collect();
    assert_eq!(
        ports,
        [
            (
                "80-8080".to_string(),
                80,
                Some(crate::sim::api::types::IntOrString::Int(8080))
            ),
            (
                "443".to_string(),
                443,
                Some(crate::sim::api::types::IntOrString::Int(443))
            ),
        ]
    );
    let np = stdout(
        &mut s,
        "create service nodeport edge --tcp=80:http --node-port=30080",
    );
    assert_eq!(np, "service/edge created\n");
    assert!(stdout(&mut s, "get svc edge").contains("80:30080/TCP"));
    assert_eq!(
        stdout(&mut s, "create service clusterip db --clusterip=None"),
        "service/db created\n"
    );
    let yaml = stdout(
        &mut s,
        "create svc loadbalancer lb --tcp=80 --dry-run=client -o yaml",
    );
    assert!(
        yaml.contains("  - name: \"80\"\n    port: 80\n    protocol: TCP\n    targetPort: 80\n"),
        "{yaml}"
    );
    assert!(
        yaml.contains("  type: LoadBalancer\n") && yaml.ends_with("status:\n  loadBalancer: {}\n"),
        "{yaml}"
    );
    assert!(run(&mut s, "get svc lb").stderr.contains("not found"));
    // kubectl's own refusals, and the server's wrapped in its words.
    let refusals = [
        (
            "create service clusterip x",
            "error: at least one tcp port specifier must be provided",
        ),
        (
            "create service nodeport x --tcp=80 --clusterip=1.2.3.4",
            "error: unknown flag: --clusterip",
        ),
        (
            "create deployment x --image=nginx --tcp=80",
            "error: unknown flag: --tcp",
        ),
        (
            "create service clusterip x --tcp=99999",
            "error: invalid port \"99999\"",
        ),
        (
            "create service clusterip api --tcp=80",
            "error: failed to create ClusterIP service: services \"api\" already exists",
        ),
        (
            "create secret tls c",
            "error: create secret tls is not supported in the playground",
        ),
        (
            "create deployment c --image=nginx --from-literal=a=b",
            "error: unknown flag: --from-literal",
        ),
    ];
    for (cmd, want) in refusals {
        let o = run(&mut s, cmd);
        assert!(
            !o.ok && o.stderr.starts_with(want),
            "kubectl {cmd}: {}",
            o.stderr
        );
    }
}

#[test]
fn create_deployment_builds_the_object_kubectl_builds() {
    let mut s = world();
    assert_eq!(
        stdout(
            &mut s,
            "create deployment api --image=registry.k8s.io/pause:3.10 --replicas=2 --port=8080"
        ),
        "deployment.apps/api created\n"
    );
    let d = deployment(&s, "api");
    assert_eq!(
        d.metadata.labels.get("app").map(|v| v.as_str()),
        Some("api")
    );
    assert_eq!(
        d.spec.selector.match_labels.get("app").map(|v| v.as_str()),
        Some("api")
    );
    assert_eq!(d.spec.replicas, Some(2));
    let c = &d.spec.template.spec.containers[0];
    assert_eq!(c.name, "pause");
    assert_eq!(c.ports[0].container_port, 8080);
    let yaml = stdout(
        &mut s,
        "create deployment dry --image=nginx:1.27 --dry-run=client -o yaml",
    );
    insta::assert_snapshot!(yaml);
    assert!(s
        .sim
        .api()
        .get(&ObjectKey::new(Kind::Deployment, "default", "dry"))
        .is_none());
    let o = run(&mut s, "create deployment api --image=nginx");
    assert_eq!(
        o.stderr,
        "error: failed to create deployment: deployments.apps \"api\" already exists\n"
    );
}

#[test]
fn a_prefixed_label_is_removed_with_its_key_and_a_dash() {
    let mut s = world();
    assert_eq!(
        stdout(
            &mut s,
            "label node node-1 topology.kubernetes.io/zone=zone-a"
        ),
        "node/node-1 labeled\n"
    );
    assert_eq!(
        stdout(&mut s, "label node node-1 topology.kubernetes.io/zone-"),
        "node/node-1 unlabeled\n"
    );
    assert_eq!(
        stdout(
            &mut s,
            "get node node-1 -o jsonpath={.metadata.labels.topology\\.kubernetes\\.io/zone}"
        ),
        ""
    );
}

#[test]
fn relabelling_a_pod_with_overwrite_makes_the_replicaset_release_it_and_replace_it() {
    let mut s = world();
    let pod = pods_of(&s, "web")[0].clone();
    let name = pod.metadata.name.clone();
    assert_eq!(
        stdout(&mut s, &format!("label pod {name} app=other --overwrite")),
        format!("pod/{name} labeled\n")
    );
    s.advance_to(90_000, usize::MAX);
    let released = s
        .sim
        .api()
        .get(&ObjectKey::new(Kind::Pod, "default", &name))
        .and_then(|o| o.as_pod())
        .cloned()
        .expect("the pod still exists");
    assert!(
        released.metadata.controller_ref().is_none(),
        "the ReplicaSet released the pod: {:?}",
        released.metadata.owner_references
    );
    let web: Vec<_> = pods_of(&s, "web");
    assert_eq!(web.len(), 3, "a replacement was created");
    assert!(web.iter().all(|p| p.metadata.name != name));
    // Removing a label: `key-`.
    assert_eq!(
        stdout(&mut s, &format!("label pod {name} app-")),
        format!("pod/{name} unlabeled\n")
    );
    assert_eq!(
        stdout(&mut s, &format!("label pod {name} tier=web")),
        format!("pod/{name} labeled\n")
    );
    assert_eq!(
        stdout(&mut s, &format!("label pod {name} tier=web")),
        format!("pod/{name} not labeled\n")
    );
}

#[test]
fn set_image_starts_a_rollout_and_undo_to_revision_one_makes_it_revision_three() {
    let mut s = world();
    assert_eq!(
        stdout(&mut s, "set image deployment/web nginx=nginx:1.28"),
        "deployment.apps/web image updated\n"
    );
    // Same image again: kubectl prints nothing.
    assert_eq!(
        stdout(&mut s, "set image deployment/web nginx=nginx:1.28"),
        ""
    );
    s.advance_to(61_000, usize::MAX);
    let status = stdout(&mut s, "rollout status deployment/web");
    assert!(
        status.starts_with("Waiting for deployment \"web\" rollout to finish"),
        "{status}"
    );
    s.advance_to(180_000, usize::MAX);
    assert_eq!(
        stdout(&mut s, "rollout status deployment/web"),
        "deployment \"web\" successfully rolled out\n"
    );
    let d = deployment(&s, "web");
    assert_eq!(d.metadata.annotations[REVISION_ANNOTATION], "2");
    assert_eq!(
        stdout(&mut s, "rollout history deployment/web"),
        "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    );
    assert_eq!(
        stdout(&mut s, "rollout undo deployment/web --to-revision=1"),
        "deployment.apps/web rolled back\n"
    );
    s.advance_to(300_000, usize::MAX);
    let d = deployment(&s, "web");
    assert_eq!(d.metadata.annotations[REVISION_ANNOTATION], "3");
    assert_eq!(d.spec.template.spec.containers[0].image, "nginx:1.27");
    assert_eq!(
        stdout(&mut s, "rollout history deployment/web"),
        "deployment.apps/web \nREVISION  CHANGE-CAUSE\n2         <none>\n3         <none>\n\n"
    );
    assert_eq!(
        stdout(&mut s, "rollout undo deployment/web --to-revision=3"),
        "deployment.apps/web skipped rollback (current template already matches revision 3)\n"
    );
}

#[test]
fn pause_resume_and_restart_print_what_kubectl_prints() {
    let mut s = world();
    assert_eq!(
        stdout(&mut s, "rollout pause deployment/web"),
        "deployment.apps/web paused\n"
    );
    let o = run(&mut s, "rollout pause deployment/web");
    assert_eq!(
        o.stderr,
        "error: deployments.apps \"web\" is already paused\n"
    );
    let o = run(&mut s, "rollout restart deployment/web");
    assert_eq!(
        o.stderr,
        "error: deployments.apps \"web\" can't restart paused deployment (run rollout resume first)\n"
    );
    let o = run(&mut s, "rollout undo deployment/web");
    assert!(o.stderr.starts_with("error: "), "{o:?}");
    assert_eq!(
        stdout(&mut s, "rollout resume deployment/web"),
        "deployment.apps/web resumed\n"
    );
    assert_eq!(
        stdout(&mut s, "rollout restart deployment/web"),
        "deployment.apps/web restarted\n"
    );
    let o = run(&mut s, "rollout restart deployment/web");
    assert!(
        o.stderr
            .contains("if restart has already been triggered within the past second"),
        "{o:?}"
    );
    s.advance_to(180_000, usize::MAX);
    assert_eq!(
        deployment(&s, "web").metadata.annotations[REVISION_ANNOTATION],
        "2"
    );
}

#[test]
fn a_strategic_patch_merges_a_container_by_name_and_keeps_the_rest_of_it() {
    let mut s = world();
    let o = stdout(
        &mut s,
        "patch deployment web -p '{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx:1.28\"}]}}}}'",
    );
    assert_eq!(o, "deployment.apps/web patched\n");
    let c = stdout(
        &mut s,
        "get deploy web -o jsonpath={.spec.template.spec.containers[0].image}/{.spec.template.spec.containers[0].ports[0].containerPort}",
    );
    assert_eq!(c, "nginx:1.28/80");
    // A merge patch of the same document replaces the list: the port is gone.
    stdout(
        &mut s,
        "patch deployment web --type=merge -p '{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"nginx\",\"image\":\"nginx:1.28\"}]}}}}'",
    );
    let c = stdout(
        &mut s,
        "get deploy web -o jsonpath={.spec.template.spec.containers[0].ports}",
    );
    assert_eq!(c, "");
    let o = stdout(
        &mut s,
        "patch deployment web --type=json -p '[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":1},{\"op\":\"add\",\"path\":\"/metadata/labels/tier\",\"value\":\"front\"}]'",
    );
    assert_eq!(o, "deployment.apps/web patched\n");
    assert_eq!(
        stdout(
            &mut s,
            "get deploy web -o jsonpath={.spec.replicas}/{.metadata.labels.tier}"
        ),
        "1/front"
    );
}

#[test]
fn scale_patch_and_delete_print_kubectls_lines() {
    let mut s = world();
    assert_eq!(
        stdout(&mut s, "scale deployment web --replicas=5"),
        "deployment.apps/web scaled\n"
    );
    let o = run(
        &mut s,
        "scale deployment web --replicas=4 --current-replicas=3",
    );
    assert_eq!(o.stderr, "error: Expected replicas to be 3, was 5\n");
    assert_eq!(
        stdout(
            &mut s,
            "patch deployment web -p '{\"spec\":{\"replicas\":5}}'"
        ),
        "deployment.apps/web patched (no change)\n"
    );
    assert_eq!(
        stdout(
            &mut s,
            "patch deploy web --type=merge -p '{\"spec\":{\"replicas\":2}}'"
        ),
        "deployment.apps/web patched\n"
    );
    s.advance_to(90_000, usize::MAX);
    let pod = pods_of(&s, "web")[0].metadata.name.clone();
    let o = run(&mut s, &format!("delete pod {pod} --force"));
    assert!(o.ok);
    assert_eq!(o.stdout, format!("pod \"{pod}\" force deleted\n"));
    assert_eq!(o.stderr, "Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.\n");
    assert_eq!(
        stdout(&mut s, "delete deployment web --cascade=orphan"),
        "deployment.apps \"web\" deleted\n"
    );
    assert_eq!(
        stdout(&mut s, "delete pods -l app=nothing"),
        "No resources found\n"
    );
}

#[test]
fn apply_reads_the_editor_text_as_stdin() {
    let mut s = Session::new(7);
    let o = s.kubectl_with_input("apply -f -", Some(WEB));
    assert!(o.ok, "{o:?}");
    assert_eq!(
        o.stdout,
        "deployment.apps/web created\nservice/web created\n"
    );
    let o = s.kubectl_with_input("apply -f web.yaml", Some(WEB));
    assert_eq!(
        o.stdout,
        "deployment.apps/web unchanged\nservice/web unchanged\n"
    );
    let o = s.kubectl("apply -f web.yaml");
    assert_eq!(o.stderr, "error: the path \"web.yaml\" does not exist\n");
    let o = s.kubectl("apply -f -");
    assert_eq!(o.stderr, "error: no objects passed to apply\n");
    let o = s.kubectl_with_input("delete -f -", Some(WEB));
    assert_eq!(
        o.stdout,
        "deployment.apps \"web\" deleted\nservice \"web\" deleted\n"
    );
}

#[test]
fn apply_through_kubectl_is_recorded_once_in_the_trace() {
    let mut s = Session::new(7);
    let before = command_entries(&s).len();
    assert!(s.kubectl_with_input("apply -f -", Some(WEB)).ok);
    assert!(s.kubectl("apply -f -").stderr.contains("no objects passed"));
    assert!(s.apply_text("web.yaml", WEB).ok);
    let commands = command_entries(&s);
    assert_eq!(
        commands[before..],
        [
            (
                "kubectl apply -f -".to_string(),
                "deployment.apps/web created\nservice/web created".to_string()
            ),
            (
                "kubectl apply -f -".to_string(),
                "error: no objects passed to apply".to_string()
            ),
            (
                "apply -f".to_string(),
                "deployment.apps/web unchanged\nservice/web unchanged".to_string()
            ),
        ]
    );
}

/// Every command the trace recorded, with its output.
fn command_entries(s: &Session) -> Vec<(String, String)> {
    s.sim
        .trace()
        .entries()
        .filter_map(|e| match &e.kind {
            crate::sim::machinery::trace::TraceKind::Command {
                command, output, ..
            } => Some((command.clone(), output.clone())),
            _ => None,
        })
        .collect()
}

// ------------------------------------------------------------------ 422 Invalid, as CheckErr prints it

/// `WEB`'s Deployment with other replicas and revisionHistoryLimit lines.
fn web_with(replicas: &str, extra: &str) -> String {
    WEB.split("---").next().expect("the Deployment").replace(
        "  replicas: 3\n",
        &format!("  replicas: {replicas}\n{extra}"),
    )
}

#[test]
fn a_refused_change_prints_the_is_invalid_line_kubectl_prints_on_every_path() {
    let mut s = world();
    let pod_port = "The Pod \"p\" is invalid: spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive\n";
    let cases: Vec<(&str, String)> = vec![
        (
            "scale deployment/web --replicas=1000000",
            "The Deployment \"web\" is invalid: spec.replicas: Invalid value: 1000000: must be less than or equal to 20000 in the playground (a simulated cluster's limit)\n".into(),
        ),
        (
            "patch deployment web -p '{\"spec\":{\"replicas\":-1}}'",
            "The Deployment \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0\n".into(),
        ),
        (
            // Several causes: `MultilineError` puts each on its own `* ` line (the first line keeps
            // the space after the colon).
            "patch deployment web --type=merge -p '{\"spec\":{\"replicas\":-1,\"revisionHistoryLimit\":-2}}'",
            "The Deployment \"web\" is invalid: \n\
             * spec.replicas: Invalid value: -1: must be greater than or equal to 0\n\
             * spec.revisionHistoryLimit: Invalid value: -2: must be greater than or equal to 0\n"
                .into(),
        ),
        ("run p --image=nginx --port=70000", pod_port.into()),
        (
            // `kubectl create deployment` wraps the server's error in its own text
            // (`fmt.Errorf("failed to create deployment: %v", err)`): the status message, several
            // causes as the aggregate's `[a, b]`.
            "create deployment big --image=nginx --replicas=1000000 --port=70000",
            "error: failed to create deployment: Deployment.apps \"big\" is invalid: [spec.replicas: Invalid value: 1000000: must be less than or equal to 20000 in the playground (a simulated cluster's limit), spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive]\n".into(),
        ),
        (
            // `set image` also wraps it (`failed to patch image update to pod template: %v`).
            "set image deployment/web 'nginx=nginx:1.28 '",
            "error: failed to patch image update to pod template: Deployment.apps \"web\" is invalid: spec.template.spec.containers[0].image: Invalid value: \"nginx:1.28 \": must not have leading or trailing whitespace\n".into(),
        ),
        (
            // One error among several prints in `StandardErrorMessage`'s form, each on its line.
            "patch deployment nope web -p '{\"spec\":{\"replicas\":-1}}'",
            "Error from server (NotFound): deployments.apps \"nope\" not found\n\
             Error from server (Invalid): Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0\n"
                .into(),
        ),
    ];
    for (cmd, want) in cases {
        let o = run(&mut s, cmd);
        assert!(!o.ok, "kubectl {cmd} succeeded");
        assert_eq!(o.stderr, want, "kubectl {cmd}");
    }
    assert_eq!(
        deployment(&s, "web").spec.replicas,
        Some(3),
        "nothing changed"
    );
}

#[test]
fn apply_reports_a_refused_object_as_one_invalid_error_with_every_cause() {
    let mut s = Session::new(7);
    let o = s.kubectl_with_input("apply -f -", Some(&web_with("-1", "")));
    assert_eq!(
        o.stderr,
        "The Deployment \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0\n"
    );
    assert!(!o.ok);
    let o = s.kubectl_with_input(
        "apply -f -",
        Some(&web_with("-1", "  revisionHistoryLimit: -1\n")),
    );
    assert_eq!(
        o.stderr,
        "The Deployment \"web\" is invalid: \n\
         * spec.replicas: Invalid value: -1: must be greater than or equal to 0\n\
         * spec.revisionHistoryLimit: Invalid value: -1: must be greater than or equal to 0\n"
    );
    let two = format!(
        "{}---\n{}",
        web_with("-1", ""),
        web_with("-2", "").replace("name: web\n", "name: api\n")
    );
    let o = s.kubectl_with_input("apply -f -", Some(&two));
    assert_eq!(
        o.stderr,
        "Error from server (Invalid): error when creating \"STDIN\": Deployment.apps \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0\n\
         Error from server (Invalid): error when creating \"STDIN\": Deployment.apps \"api\" is invalid: spec.replicas: Invalid value: -2: must be greater than or equal to 0\n"
    );
    assert!(s.sim.api().list(Kind::Deployment).next().is_none());
}

#[test]
fn apply_reports_an_immutable_selector_as_the_api_server_refuses_it() {
    let mut s = world();
    let moved = web_with("3", "").replace("app: web}", "app: web2}");
    let o = s.kubectl_with_input("apply -f -", Some(&moved));
    assert_eq!(
        o.stderr,
        "The Deployment \"web\" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable\n"
    );
}

#[test]
fn wait_answers_now_whether_the_condition_holds() {
    let mut s = Session::new(7);
    s.apply_text("web.yaml", WEB);
    s.advance_to(100, usize::MAX);
    let o = run(
        &mut s,
        "wait deployment/web --for=condition=Available --timeout=30s",
    );
    assert_eq!(
        o.stderr,
        "error: timed out waiting for the condition on deployments/web\n"
    );
    s.advance_to(60_000, usize::MAX);
    assert_eq!(
        stdout(&mut s, "wait deployment/web --for=condition=Available"),
        "deployment.apps/web condition met\n"
    );
    assert_eq!(
        stdout(
            &mut s,
            "wait deploy/web --for=jsonpath='{.status.readyReplicas}'=3"
        ),
        "deployment.apps/web condition met\n"
    );
    assert_eq!(stdout(&mut s, "wait pod/gone --for=delete"), "");
    let o = run(&mut s, "wait pods -l app=nothing --for=condition=Ready");
    assert_eq!(o.stderr, "error: no matching resources found\n");
}

// ------------------------------------------------------------------ cordon and drain

#[test]
fn cordon_adds_the_unschedulable_taint_through_the_node_controller() {
    let mut s = world();
    assert_eq!(stdout(&mut s, "cordon node-2"), "node/node-2 cordoned\n");
    assert_eq!(
        stdout(&mut s, "cordon node-2"),
        "node/node-2 already cordoned\n"
    );
    s.advance_to(70_000, usize::MAX);
    let node = s
        .sim
        .api()
        .get(&ObjectKey::new(Kind::Node, "", "node-2"))
        .and_then(|o| o.as_node())
        .cloned()
        .expect("node-2");
    assert!(node
        .spec
        .taints
        .iter()
        .any(|t| t.key == "node.kubernetes.io/unschedulable" && t.effect == "NoSchedule"));
    assert!(stdout(&mut s, "get nodes").contains("node-2   Ready,SchedulingDisabled"));
    assert_eq!(
        stdout(&mut s, "uncordon node-2"),
        "node/node-2 uncordoned\n"
    );
    assert_eq!(
        stdout(&mut s, "uncordon node-2"),
        "node/node-2 already uncordoned\n"
    );
}

const FIVE: &str = "apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 5
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 5
      containers:
      - name: nginx
        image: nginx:1.27
";

/// The store's index of pods by node answers what a scan of every pod does: the same pods in
/// the same order, for every node and for the unscheduled (""), from the first list (before
/// anything exists) through creates, binds, a drain's evictions, deletes and a scale-down,
/// and in a copy of the store (time travel's snapshots copy it). So does its count of bound
/// pods, which no list builds.
#[test]
fn pods_listed_by_node_from_the_index_and_the_bound_count_are_what_a_scan_finds() {
    fn same_as_a_scan(api: &crate::sim::api::apiserver::ApiServer, when: &str) {
        let bound = api
            .list(Kind::Pod)
            .filter(|o| o.as_pod().is_some_and(|p| !p.spec.node_name.is_empty()))
            .count();
        assert_eq!(api.bound_pods(), bound, "{when}: bound pods");
        let mut nodes: Vec<String> = ["", "node-1", "node-2", "node-3", "nowhere"]
            .map(String::from)
            .to_vec();
        for o in api.list(Kind::Pod) {
            let node = o.as_pod().expect("a pod").spec.node_name.to_string();
            if !nodes.contains(&node) {
                nodes.push(node);
            }
        }
        for node in nodes {
            let names = |pods: &mut dyn Iterator<
                Item = &std::rc::Rc<crate::sim::api::types::Object>,
            >| { pods.map(|o| o.key().trace_name()).collect::<Vec<_>>() };
            let indexed = names(&mut api.list_pods_on_node(&node));
            let scanned = names(
                &mut api
                    .list(Kind::Pod)
                    .filter(|o| o.as_pod().is_some_and(|p| p.spec.node_name == node)),
            );
            assert_eq!(indexed, scanned, "{when}: pods on {node:?}");
        }
    }
    let mut s = Session::new(7);
    same_as_a_scan(s.sim.api(), "before anything exists");
    let big = "---\napiVersion: v1\nkind: Pod\nmetadata: {name: too-big}\nspec: {containers: [{name: app, image: nginx:1.27, resources: {requests: {cpu: \"500\"}}}]}\n";
    let r = s.apply_text("web.yaml", &format!("{FIVE}{big}"));
    assert!(r.ok, "{r:?}");
    for t in [100, 1_000, 3_000, 60_000] {
        s.advance_to(t, usize::MAX);
        same_as_a_scan(s.sim.api(), &format!("at {t} ms"));
    }
    assert_eq!(
        s.sim.api().list_pods_on_node("").count(),
        1,
        "the pod no node fits"
    );
    let node = node_with_most_web_pods(&s);
    stdout(&mut s, &format!("drain {node} --ignore-daemonsets --force"));
    s.advance_to(120_000, usize::MAX);
    same_as_a_scan(s.sim.api(), "after a drain");
    let copy = s.sim.api().clone();
    stdout(&mut s, "delete pod too-big");
    stdout(&mut s, "scale deployment web --replicas=2");
    s.advance_to(180_000, usize::MAX);
    same_as_a_scan(s.sim.api(), "after a delete and a scale-down");
    same_as_a_scan(&copy, "in a copy taken before them");
    assert_eq!(
        stdout(
            &mut s,
            &format!("get pods --field-selector=spec.nodeName={node} -o name")
        ),
        "",
        "the drained node runs nothing"
    );
}

fn node_with_most_web_pods(s: &Session) -> String {
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    for p in pods_of(s, "web") {
        *counts.entry(p.spec.node_name.to_string()).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|(n, c)| (*c, std::cmp::Reverse(n.clone())))
        .map(|(n, _)| n)
        .expect("web runs somewhere")
}

#[test]
fn drain_with_a_satisfiable_budget_evicts_every_pod_and_finishes() {
    let pdb = "---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web-pdb}
spec:
  minAvailable: 4
  selector: {matchLabels: {app: web}}
";
    let mut s = world_with(&format!("{FIVE}{pdb}"), 60_000);
    let node = node_with_most_web_pods(&s);
    let on_node = pods_of(&s, "web")
        .iter()
        .filter(|p| p.spec.node_name == node)
        .count();
    assert!(on_node >= 2, "the test wants a PDB-limited second eviction");
    let o = run(&mut s, &format!("drain {node} --ignore-daemonsets"));
    assert!(o.ok, "{o:?}");
    assert_eq!(o.stdout, format!("node/{node} cordoned\n"));
    s.advance_to(300_000, usize::MAX);
    let logs = s.sim.command_logs();
    assert_eq!(logs.len(), 1);
    let log = &logs[0];
    assert_eq!(log.finished.map(|(_, ok)| ok), Some(true), "{}", log.text());
    let last = log.lines.last().expect("output");
    assert_eq!(last.text, format!("node/{node} drained"));
    assert_eq!(
        log.lines
            .iter()
            .filter(|l| l.text.ends_with(" evicted"))
            .count(),
        on_node,
        "{}",
        log.text()
    );
    assert!(
        log.lines.iter().any(|l| l.stream == Stream::Stderr
            && l.text.ends_with("(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.")),
        "the budget made a second eviction wait: {}",
        log.text()
    );
    assert!(pods_of(&s, "web").iter().all(|p| p.spec.node_name != node));
    assert_eq!(pods_of(&s, "web").len(), 5);
}

#[test]
fn drain_blocked_by_a_budget_stricter_than_the_replicas_retries_every_five_seconds() {
    let mut s = world_with(&format!("{FIVE}{PDB_TIGHT}"), 60_000);
    let node = node_with_most_web_pods(&s);
    let o = run(&mut s, &format!("drain {node} --ignore-daemonsets"));
    assert!(o.ok, "{o:?}");
    s.advance_to(100_000, usize::MAX);
    let log = s.sim.command_logs().remove(0);
    assert!(log.running(), "{}", log.text());
    let retries: Vec<_> = log
        .lines
        .iter()
        .filter(|l| l.stream == Stream::Stderr)
        .collect();
    let first_pod = retries[0].text.clone();
    assert!(
        first_pod.starts_with("error when evicting pods/\"web-")
            && first_pod.ends_with(" -n \"default\" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget."),
        "{first_pod}"
    );
    let times: Vec<u64> = retries
        .iter()
        .filter(|l| l.text == first_pod)
        .map(|l| l.at)
        .collect();
    assert!(times.len() >= 6, "{}", log.text());
    for w in times.windows(2) {
        let gap = w[1] - w[0];
        assert!(
            (5_000..5_100).contains(&gap),
            "retries 5 s apart: {times:?}"
        );
    }
    let node_obj = s
        .sim
        .api()
        .get(&ObjectKey::new(Kind::Node, "", &node))
        .and_then(|o| o.as_node())
        .cloned()
        .expect("node");
    assert!(node_obj.spec.unschedulable, "the node stays cordoned");
    assert_eq!(pods_of(&s, "web").len(), 5);
    // Ctrl-C ends it.
    assert!(s.sim.interrupt_command(&log.id));
    let log = s.sim.command_logs().remove(0);
    assert_eq!(log.lines.last().map(|l| l.text.as_str()), Some("^C"));
    assert!(!log.running());
}

#[test]
fn drain_with_a_timeout_gives_up_with_kubectls_error_sequence() {
    let mut s = world_with(&format!("{FIVE}{PDB_TIGHT}"), 60_000);
    let node = node_with_most_web_pods(&s);
    run(&mut s, &format!("drain {node} --timeout=12s"));
    s.advance_to(120_000, usize::MAX);
    let log = s.sim.command_logs().remove(0);
    assert_eq!(
        log.finished.map(|(_, ok)| ok),
        Some(false),
        "{}",
        log.text()
    );
    let text = log.text();
    assert!(text.contains("global timeout reached: 12s"), "{text}");
    assert!(
        text.contains(&format!(
            "error: unable to drain node \"{node}\" due to error: "
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "There are pending nodes to be drained:\n {node}\n"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "There are pending pods in node \"{node}\" when an error occurred"
        )),
        "{text}"
    );
}

#[test]
fn drain_refuses_pods_without_a_controller_unless_forced() {
    let mut s = world();
    stdout(&mut s, "run toolbox --image=busybox:1.36");
    s.advance_to(90_000, usize::MAX);
    let node = s
        .sim
        .api()
        .get(&ObjectKey::new(Kind::Pod, "default", "toolbox"))
        .and_then(|o| o.as_pod())
        .map(|p| p.spec.node_name.clone())
        .expect("toolbox is scheduled");
    let o = run(&mut s, &format!("drain {node}"));
    assert!(!o.ok);
    assert_eq!(o.stdout, format!("node/{node} cordoned\n"));
    let err = "cannot delete cannot delete Pods that declare no controller (use --force to override): default/toolbox";
    assert_eq!(
        o.stderr,
        format!("error: unable to drain node \"{node}\" due to error: {err}, continuing command...\nThere are pending nodes to be drained:\n {node}\nerror: {err}\n")
    );
    let o = run(&mut s, &format!("drain {node} --force"));
    assert!(o.ok, "{o:?}");
    assert_eq!(o.stdout, format!("node/{node} already cordoned\n"));
    assert_eq!(
        o.stderr,
        "Warning: deleting Pods that declare no controller: default/toolbox\n"
    );
    s.advance_to(150_000, usize::MAX);
    let log = s.sim.command_logs().remove(0);
    assert_eq!(log.finished.map(|(_, ok)| ok), Some(true), "{}", log.text());
    insta::assert_snapshot!(log.text());
}

#[test]
fn shell_syntax_and_substitutions_are_refused_with_what_to_do_instead() {
    let mut s = world();
    for (cmd, what) in [
        (
            "get pods | grep web",
            "shell syntax (pipes, redirections, chained commands)",
        ),
        (
            "get pods && get nodes",
            "shell syntax (pipes, redirections, chained commands)",
        ),
        (
            "label pod $(kubectl get pods -o name) tier=web",
            "shell substitution ($(…), `…`, ${…})",
        ),
        (
            "describe pod `kubectl get pods -o name`",
            "shell substitution ($(…), `…`, ${…})",
        ),
    ] {
        let o = run(&mut s, cmd);
        assert!(!o.ok, "{cmd}");
        assert!(
            o.stderr.starts_with(&format!("error: {what}")),
            "{cmd}: {}",
            o.stderr
        );
    }
}

#[test]
fn jsonpath_ranges_filters_and_literals_print_what_a_real_kubectl_prints() {
    let mut s = world();
    let lines = stdout(
        &mut s,
        r#"get pods -o jsonpath='{range .items[*]}{.metadata.name}{"\t"}{.spec.nodeName}{"\t"}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}'"#,
    );
    let rows: Vec<Vec<&str>> = lines.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 3, "{lines}");
    for r in &rows {
        assert!(r[0].starts_with("web-"), "{lines}");
        assert!(r[1].starts_with("node-"), "{lines}");
        assert_eq!(r[2], "True", "{lines}");
    }
    // A key that is not there prints nothing (`--allow-missing-template-keys` defaults to true)…
    assert_eq!(
        stdout(&mut s, "get deploy web -o jsonpath={.status.notThere}"),
        ""
    );
    // …and fails when missing keys are not allowed.
    let strict = run(
        &mut s,
        "get deploy web -o jsonpath={.status.notThere} --allow-missing-template-keys=false",
    );
    assert!(!strict.ok);
    assert!(
        strict.stderr.starts_with("error: error executing jsonpath \"{.status.notThere}\": Error executing template: notThere is not found. Printing more information"),
        "{}",
        strict.stderr
    );
    // Text outside an action is printed as written, escapes included.
    assert_eq!(
        stdout(&mut s, r"get deploy web -o jsonpath={.spec.replicas}\n"),
        r"3\n"
    );
    let parse = run(&mut s, "get pods -o jsonpath={.items[0]");
    assert_eq!(
        parse.stderr,
        "error: error parsing jsonpath {.items[0], unclosed action\n"
    );
    let parse = run(&mut s, "get pods -o jsonpath={.items[0}");
    assert_eq!(
        parse.stderr,
        "error: error parsing jsonpath {.items[0}, unterminated array\n"
    );
    let bounds = run(&mut s, "get pods -o jsonpath={.items[7].metadata.name}");
    assert!(
        bounds
            .stderr
            .contains("array index out of bounds: index 7, length 3"),
        "{}",
        bounds.stderr
    );
    assert_eq!(
        stdout(
            &mut s,
            "get deploy web -o jsonpath-as-json={.spec.replicas}"
        ),
        "[\n    3\n]\n"
    );
}

#[test]
fn custom_columns_print_a_table_of_the_paths_they_name() {
    let mut s = world_with(WEB, 60_000);
    let table = stdout(
        &mut s,
        "get pods -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,IMAGES:.spec.containers[*].image,GATES:.spec.readinessGates",
    );
    let mut lines = table.lines();
    let header = lines.next().unwrap_or_default();
    assert!(header.starts_with("NAME "), "{table}");
    assert!(header.contains("   NODE "), "{table}");
    assert!(header.ends_with("GATES"), "{table}");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 3, "{table}");
    for r in &rows {
        assert!(r[1].starts_with("node-"), "{table}");
        assert_eq!(&r[2..], ["nginx:1.27", "<none>"], "{table}");
    }
    let bare = stdout(
        &mut s,
        "get nodes -o custom-columns=NAME:.metadata.name,CPU:.status.capacity.cpu --no-headers",
    );
    assert_eq!(bare.lines().count(), 3, "{bare}");
    assert!(
        bare.lines()
            .all(|l| l.split_whitespace().nth(1) == Some("4")),
        "{bare}"
    );
    let bad = run(&mut s, "get pods -o custom-columns=NAME");
    assert_eq!(
        bad.stderr,
        "error: unexpected custom-columns spec: NAME, expected <header>:<json-path-expr>\n"
    );
    let none = run(
        &mut s,
        "get pods -l app=none -o custom-columns=NAME:.metadata.name",
    );
    assert_eq!(
        (none.stdout.as_str(), none.stderr.as_str()),
        ("", "No resources found in default namespace.\n")
    );
}

#[test]
fn wait_for_jsonpath_takes_filters_and_compares_the_printed_value() {
    let mut s = world();
    let ok = run(
        &mut s,
        r#"wait deploy/web --for=jsonpath='{.status.conditions[?(@.type=="Available")].status}'=True --timeout=10s"#,
    );
    assert!(ok.ok, "{ok:?}");
    assert_eq!(ok.stdout, "deployment.apps/web condition met\n");
    let bad = run(
        &mut s,
        "wait deploy/web --for=jsonpath={.status[}=1 --timeout=1s",
    );
    assert!(!bad.ok);
    assert!(bad.stderr.contains("unterminated array"), "{}", bad.stderr);
}

#[test]
fn sort_by_takes_jsonpath_and_refuses_a_field_no_object_has() {
    let mut s = world();
    let by_node = first_column(&mut s, "get pods --sort-by=.spec.nodeName -o wide");
    let nodes = stdout(
        &mut s,
        "get pods --sort-by={.spec.nodeName} -o jsonpath={.items[*].spec.nodeName}",
    );
    assert_eq!(nodes, "node-1 node-2 node-3");
    assert_eq!(by_node.len(), 3);
    let by_ready_time = first_column(
        &mut s,
        r#"get pods --sort-by='.status.conditions[?(@.type=="Ready")].lastTransitionTime'"#,
    );
    assert_eq!(by_ready_time.len(), 3);
    let missing = run(&mut s, "get pods --sort-by=.spec.notThere");
    assert_eq!(
        missing.stderr,
        "error: couldn't find any field with path \"{.spec.notThere}\" in the list of objects\n"
    );
}

#[test]
fn get_of_several_types_names_every_object_with_its_type_and_parts_the_tables_with_blank_lines() {
    let mut s = world();
    let out = stdout(&mut s, "get deploy,rs,pods");
    let tables: Vec<&str> = out.split("\n\n").collect();
    assert_eq!(tables.len(), 3, "{out}");
    for (table, prefix) in
        tables
            .iter()
            .zip(["deployment.apps/web", "replicaset.apps/web-", "pod/web-"])
    {
        let rows: Vec<&str> = table.lines().skip(1).collect();
        assert!(!rows.is_empty(), "{out}");
        assert!(rows.iter().all(|r| r.starts_with(prefix)), "{out}");
    }
    // A type asked for with nothing to show still counts, as `kubectl get all` on an empty
    // cluster prints `service/kubernetes`: kubectl fetches one table per type.
    let out = stdout(&mut s, "get pdb,pods -o wide");
    assert!(out.starts_with("NAME "), "{out}");
    assert!(
        out.lines().skip(1).all(|l| l.starts_with("pod/web-")),
        "{out}"
    );
    // Without headers there is no blank line either; one type gives bare names.
    let out = stdout(&mut s, "get deploy,pods --no-headers");
    assert_eq!(out.lines().count(), 4, "{out}");
    assert!(!out.contains("\n\n"), "{out}");
    assert!(stdout(&mut s, "get pods")
        .lines()
        .skip(1)
        .all(|l| l.starts_with("web-")));
}

#[test]
fn apply_reads_a_here_document_as_bash_passes_it_instead_of_the_editor_text() {
    let mut s = Session::new(7);
    let svc = |name: &str| {
        format!("apiVersion: v1\nkind: Service\nmetadata: {{name: {name}}}\nspec:\n  selector: {{app: {name}}}\n  ports: [{{port: 80}}]\n")
    };
    let o = s.kubectl(&format!("kubectl apply -f - <<EOF\n{}EOF\n", svc("api")));
    assert_eq!(
        (o.stdout.as_str(), o.stderr.as_str()),
        ("service/api created\n", "")
    );
    // The here-document is the standard input, whatever the editor holds.
    let o = s.kubectl_with_input(
        &format!("cat <<'EOF' | kubectl apply -f -\n{}EOF", svc("db")),
        Some(WEB),
    );
    assert_eq!(o.stdout, "service/db created\n");
    assert!(s
        .sim
        .api()
        .get(&ObjectKey::new(Kind::Deployment, "default", "web"))
        .is_none());
    // Left open, bash warns and hands over what there is.
    let o = s.kubectl(&format!("apply -f - <<EOF\n{}", svc("cache")));
    assert_eq!(
        o.stderr,
        "bash: warning: here-document at line 1 delimited by end-of-file (wanted `EOF')\n"
    );
    assert_eq!(o.stdout, "service/cache created\n");
    // A long command split with backslashes is one command.
    let o = s.kubectl("create deployment api \\\n  --image=nginx:1.27 \\\n  --replicas=2");
    assert_eq!(o.stdout, "deployment.apps/api created\n");
    // Two commands pasted at once are refused, with nothing run.
    let o = s.kubectl("delete service api\ndelete service db");
    assert!(
        o.stderr.starts_with("error: several commands in one entry"),
        "{o:?}"
    );
    assert_eq!(
        s.sim.api().list(Kind::Service).count(),
        4,
        "kubernetes, api, db, cache"
    );
}

#[test]
fn edit_names_the_commands_that_make_the_same_change() {
    let mut s = world();
    let pod = pods_of(&s, "web")[0].metadata.name.clone();
    let o = run(&mut s, &format!("edit pod {pod}"));
    assert!(!o.ok);
    assert_eq!(
        o.stderr,
        format!(
            "error: kubectl edit is not supported in the playground: the console cannot open a text editor. To change pod/{pod}, run for example\n  kubectl set image pod/{pod} nginx=IMAGE\n  kubectl patch pods {pod} -p '{{\"metadata\":{{\"labels\":{{\"key\":\"value\"}}}}}}'\nor edit its manifest in the editor and Apply it.\n"
        )
    );
    let o = run(&mut s, "edit deployment/web -n default");
    assert!(
        o.stderr.contains("\n  kubectl set image deployment/web nginx=IMAGE\n  kubectl scale deployment/web --replicas=N\n"),
        "{}",
        o.stderr
    );
    let o = run(&mut s, "edit");
    assert!(
        o.stderr.starts_with("error: kubectl edit is not supported in the playground (the console cannot open a text editor"),
        "{}",
        o.stderr
    );
}

#[test]
fn get_events_sorted_by_last_timestamp_lists_the_latest_last_whatever_their_names() {
    let mut s = world();
    let victim = pods_of(&s, "web")[0].metadata.name.clone();
    s.inject(crate::sim::faults::Fault::CrashLoop {
        target: crate::sim::faults::PodTarget {
            pod: Some(victim.to_string()),
            namespace: "default".into(),
            ..Default::default()
        },
        exit_code: 1,
        duration: None,
    })
    .expect("the pod crash-loops");
    s.advance_to(400_000, usize::MAX);
    let api_order = first_column(&mut s, "get events -o custom-columns=LAST:.lastTimestamp");
    let sorted = first_column(
        &mut s,
        "get events --sort-by=.lastTimestamp -o custom-columns=LAST:.lastTimestamp",
    );
    assert!(sorted.windows(2).all(|w| w[0] <= w[1]), "{sorted:?}");
    assert_ne!(
        api_order, sorted,
        "repeated Events keep their names but move in time"
    );
    // The table sorts the same rows: the BackOff seen last is the last row.
    let table = stdout(&mut s, "get events --sort-by=.lastTimestamp");
    assert!(
        table.lines().last().is_some_and(|l| l.contains("BackOff")),
        "{table}"
    );
}

#[test]
fn describe_deployment_lists_conditions_in_the_order_the_deployment_controller_stored_them() {
    // kubectl prints `status.conditions` as stored, and `SetDeploymentCondition` moves a condition
    // that changes to the end: Available then Progressing once a rollout completes, Progressing
    // then Available after a pod was replaced (Available went False and True again), as on a
    // real cluster.
    let conditions = |s: &mut Session| -> Vec<String> {
        stdout(s, "describe deployment web")
            .lines()
            .skip_while(|l| !l.starts_with("Conditions:"))
            .skip(3)
            .take_while(|l| l.starts_with("  "))
            .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .collect()
    };
    let mut s = world();
    assert_eq!(
        conditions(&mut s),
        [
            "Available True MinimumReplicasAvailable",
            "Progressing True NewReplicaSetAvailable"
        ]
    );
    let stored: Vec<crate::sim::api::types::Str> = deployment(&s, "web")
        .status
        .conditions
        .iter()
        .map(|c| c.type_.clone())
        .collect();
    assert_eq!(stored, ["Available", "Progressing"]);
    let victim = pods_of(&s, "web")[0].metadata.name.clone();
    stdout(&mut s, &format!("delete pod {victim}"));
    s.advance_to(120_000, usize::MAX);
    assert_eq!(
        conditions(&mut s),
        [
            "Progressing True NewReplicaSetAvailable",
            "Available True MinimumReplicasAvailable"
        ]
    );
}

#[test]
fn apply_reports_unknown_fields_as_the_api_servers_one_bad_request() {
    let mut s = Session::new(7);
    let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicass: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: a\n        image: b\n        imagee: c\n";
    let out = s.kubectl_with_input("apply -f web.yaml", Some(text));
    assert!(!out.ok);
    assert_eq!(
        out.stderr,
        "Error from server (BadRequest): error when creating \"web.yaml\": Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: unknown field \"spec.replicass\", unknown field \"spec.template.spec.containers[0].imagee\"\n"
    );
}

#[test]
fn apply_of_a_bad_change_to_an_existing_object_shows_the_patch_kubectl_sent_and_to_what() {
    let mut s = Session::new(7);
    let web = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec: {containers: [{name: nginx, image: nginx:1.27}]}\n";
    assert!(s.kubectl_with_input("apply -f web.yaml", Some(web)).ok);
    let bad = web.replace("replicas: 2", "replicas: two");
    let out = s.kubectl_with_input("apply -f web.yaml", Some(&bad));
    assert!(!out.ok);
    let last_applied = r#"{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"annotations\":{},\"name\":\"web\",\"namespace\":\"default\"},\"spec\":{\"replicas\":\"two\",\"selector\":{\"matchLabels\":{\"app\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":\"web\"}},\"spec\":{\"containers\":[{\"image\":\"nginx:1.27\",\"name\":\"nginx\"}]}}}}"#;
    assert_eq!(
        out.stderr,
        format!(
            "Error from server (BadRequest): error when applying patch:\n{{\"metadata\":{{\"annotations\":{{\"kubectl.kubernetes.io/last-applied-configuration\":\"{last_applied}\"}}}},\"spec\":{{\"replicas\":\"two\"}}}}\nto:\nResource: \"apps/v1, Resource=deployments\", GroupVersionKind: \"apps/v1, Kind=Deployment\"\nName: \"web\", Namespace: \"default\"\nfor: \"web.yaml\": error when patching \"web.yaml\": Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32\n"
        )
    );
    // A new object is created, so its refusal says so.
    let api = web
        .replace("name: web", "name: api")
        .replace("replicas: 2", "replicas: two");
    let out = s.kubectl_with_input("apply -f api.yaml", Some(&api));
    assert!(out
        .stderr
        .starts_with("Error from server (BadRequest): error when creating \"api.yaml\": "));
}

#[test]
fn apply_validate_warn_creates_the_object_without_its_unknown_fields_and_warns_of_each() {
    let mut s = Session::new(7);
    let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicass: 3\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: a\n        image: b\n        imagee: c\n";
    let out = s.kubectl_with_input("apply -f web.yaml --validate=warn", Some(text));
    assert!(out.ok, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "Warning: unknown field \"spec.replicass\"\nWarning: unknown field \"spec.template.spec.containers[0].imagee\"\n"
    );
    assert_eq!(out.stdout, "deployment.apps/web created\n");
}
