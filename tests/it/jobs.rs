//! Jobs: pods that run to completion, counted exactly once through the tracking finalizer, the
//! failure back-off and backoffLimit, the two-step terminal conditions of v1.34, Indexed Jobs,
//! suspension, deadlines and the TTL after finishing.

use kubeloop::sim::api::types::Kind;
use kubeloop::sim::session::Session;

const PI: &str = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  backoffLimit: 4
  template:
    spec:
      containers:
      - name: pi
        image: perl:5.34.0
        command: ["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]
      restartPolicy: Never
"#;

fn started(yaml: &str) -> Session {
    crate::support::applied(yaml)
}

/// The Job's events (`reason: message`), in the order they were first recorded.
fn job_events(s: &Session) -> Vec<String> {
    crate::support::events(s, "Job", None)
        .into_iter()
        .map(|(r, m)| format!("{r}: {m}"))
        .collect()
}

fn jsonpath(s: &mut Session, what: &str, path: &str) -> String {
    s.kubectl(&format!("get {what} -o jsonpath={path}")).stdout
}

#[test]
fn a_job_runs_its_pod_to_completion_and_says_so_in_two_steps() {
    let mut s = started(PI);
    s.advance_to(60_000, usize::MAX);
    let out = s.kubectl("get jobs");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    );
    let row: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(&row[..3], ["pi", "Complete", "1/1"], "{}", out.stdout);
    assert_eq!(
        jsonpath(&mut s, "job pi", "{.status.conditions[*].type}"),
        "SuccessCriteriaMet Complete"
    );
    assert_eq!(
        jsonpath(&mut s, "job pi", "{.status.conditions[1].reason}"),
        "CompletionsReached"
    );
    assert_eq!(jsonpath(&mut s, "job pi", "{.status.succeeded}"), "1");
    assert_eq!(
        jsonpath(&mut s, "job pi", "{.status.uncountedTerminatedPods}"),
        "{}"
    );
    let events = job_events(&s);
    assert!(
        events[0].starts_with("SuccessfulCreate: Created pod: pi-"),
        "{events:?}"
    );
    assert_eq!(
        events.last().map(String::as_str),
        Some("Completed: Job completed")
    );
    // The pod stays, Completed, without its tracking finalizer.
    let pods = s.kubectl("get pods");
    assert!(pods.stdout.contains("Completed"), "{}", pods.stdout);
    assert_eq!(
        jsonpath(&mut s, "pods", "{.items[0].metadata.finalizers}"),
        ""
    );
    assert_eq!(
        jsonpath(
            &mut s,
            "pods",
            "{.items[0].metadata.labels.batch\\.kubernetes\\.io/job-name}"
        ),
        "pi"
    );
}

const FLAKY: &str = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: flaky
spec:
  backoffLimit: 2
  template:
    spec:
      containers:
      - name: work
        image: busybox:1.36
        command: ["sh", "-c", "sleep 2; exit 1"]
      restartPolicy: Never
"#;

#[test]
fn failed_pods_are_replaced_after_a_doubling_back_off_until_the_backoff_limit() {
    let mut s = started(FLAKY);
    s.advance_to(300_000, usize::MAX);
    assert_eq!(
        jsonpath(&mut s, "job flaky", "{.status.conditions[*].type}"),
        "FailureTarget Failed"
    );
    assert_eq!(jsonpath(&mut s, "job flaky", "{.status.failed}"), "3");
    let events = job_events(&s);
    assert_eq!(
        events.last().map(String::as_str),
        Some("BackoffLimitExceeded: Job has reached the specified backoff limit"),
        "{events:?}"
    );
    // Three pods, each created 10 s, then 20 s after the previous one failed.
    let mut created: Vec<u64> = s
        .sim
        .api()
        .list(Kind::Pod)
        .filter_map(|o| o.as_pod())
        .filter_map(|p| p.metadata.creation_timestamp.map(|t| t.0))
        .collect();
    created.sort();
    assert_eq!(created.len(), 3, "{created:?}");
    let gaps: Vec<u64> = created.windows(2).map(|w| (w[1] - w[0]) / 1000).collect();
    // Each pod runs ~2 s plus its start-up; the waits are 10 s and 20 s after the failure.
    assert!(gaps[0] >= 12 && gaps[0] <= 20, "{gaps:?}");
    assert!(gaps[1] >= 22 && gaps[1] <= 30, "{gaps:?}");
    let out = s.kubectl("get jobs");
    assert!(out.stdout.contains("Failed"), "{}", out.stdout);
    assert!(out.stdout.contains("0/1"), "{}", out.stdout);
}

#[test]
fn a_job_without_a_restart_policy_gets_the_api_servers_refusal() {
    let mut s = Session::new(1);
    let report = s.apply_text(
        "job.yaml",
        "apiVersion: batch/v1\nkind: Job\nmetadata: {name: pi}\nspec:\n  template:\n    spec:\n      containers: [{name: pi, image: busybox}]\n",
    );
    assert!(!report.ok);
    let text = format!("{report:?}");
    assert!(
        text.contains("spec.template.spec.restartPolicy: Required value: valid values: \\\"OnFailure\\\", \\\"Never\\\""),
        "{text}"
    );
}

const INDEXED: &str = r#"apiVersion: batch/v1
kind: Job
metadata:
  name: batch
spec:
  completions: 3
  parallelism: 2
  completionMode: Indexed
  template:
    spec:
      containers:
      - name: w
        image: busybox:1.36
        command: ["sleep", "5"]
      restartPolicy: Never
"#;

#[test]
fn an_indexed_job_runs_each_index_once_with_at_most_parallelism_at_a_time() {
    let mut s = started(INDEXED);
    s.advance_to(4_000, usize::MAX);
    assert_eq!(jsonpath(&mut s, "job batch", "{.status.active}"), "2");
    s.advance_to(120_000, usize::MAX);
    assert_eq!(
        jsonpath(&mut s, "job batch", "{.status.completedIndexes}"),
        "0-2"
    );
    assert_eq!(jsonpath(&mut s, "job batch", "{.status.succeeded}"), "3");
    let names = s.kubectl("get pods -o name").stdout;
    for i in 0..3 {
        assert!(names.contains(&format!("pod/batch-{i}-")), "{names}");
    }
    assert_eq!(
        jsonpath(&mut s, "pods", "{.items[*].spec.hostname}"),
        "batch-0 batch-1 batch-2"
    );
}

#[test]
fn a_job_past_its_active_deadline_fails_and_its_pods_are_deleted() {
    let mut s = started(
        &PI.replace(
            "backoffLimit: 4",
            "backoffLimit: 4\n  activeDeadlineSeconds: 10",
        )
        .replace(
            r#"["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]"#,
            r#"["sleep", "600"]"#,
        ),
    );
    s.advance_to(60_000, usize::MAX);
    assert_eq!(
        jsonpath(&mut s, "job pi", "{.status.conditions[*].reason}"),
        "DeadlineExceeded DeadlineExceeded"
    );
    assert_eq!(s.kubectl("get pods -o name").stdout, "");
    assert!(job_events(&s)
        .iter()
        .any(|e| e.starts_with("SuccessfulDelete: Deleted pod: pi-")));
}

#[test]
fn a_finished_job_with_a_ttl_is_deleted_with_its_pods() {
    let mut s = started(&PI.replace(
        "backoffLimit: 4",
        "backoffLimit: 4\n  ttlSecondsAfterFinished: 30",
    ));
    s.advance_to(20_000, usize::MAX);
    assert!(s.kubectl("get job pi").stdout.contains("Complete"));
    s.advance_to(90_000, usize::MAX);
    let out = s.kubectl("get jobs");
    assert!(!out.stdout.contains("pi"), "{}", out.stdout);
    assert_eq!(s.kubectl("get pods -o name").stdout, "");
}

#[test]
fn a_suspended_job_makes_no_pods_until_resumed() {
    let mut s = started(&PI.replace("backoffLimit: 4", "backoffLimit: 4\n  suspend: true"));
    s.advance_to(20_000, usize::MAX);
    assert_eq!(s.kubectl("get pods -o name").stdout, "");
    assert!(s.kubectl("get job pi").stdout.contains("Suspended"));
    let out = s.kubectl(r#"patch job pi -p '{"spec":{"suspend":false}}'"#);
    assert!(out.ok, "{out:?}");
    s.advance_to(60_000, usize::MAX);
    assert!(s.kubectl("get job pi").stdout.contains("Complete"));
    let events = job_events(&s);
    assert!(
        events.contains(&"Suspended: Job suspended".to_string()),
        "{events:?}"
    );
    assert!(
        events.contains(&"Resumed: Job resumed".to_string()),
        "{events:?}"
    );
}

#[test]
fn a_busybox_deployment_without_a_command_crash_loops_as_on_a_real_cluster() {
    let mut s = Session::new(1);
    let report = s.apply_text(
        "d.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: tools}\nspec:\n  selector: {matchLabels: {app: tools}}\n  template:\n    metadata: {labels: {app: tools}}\n    spec:\n      containers: [{name: sh, image: busybox}]\n",
    );
    assert!(report.ok);
    s.advance_to(90_000, usize::MAX);
    let out = s.kubectl("get pods");
    assert!(
        out.stdout.contains("CrashLoopBackOff") || out.stdout.contains("Completed"),
        "{}",
        out.stdout
    );
    let restarts = jsonpath(
        &mut s,
        "pods",
        "{.items[0].status.containerStatuses[0].restartCount}",
    );
    assert!(restarts.parse::<i32>().unwrap_or(0) >= 2, "{restarts}");
    assert_eq!(
        jsonpath(
            &mut s,
            "pods",
            "{.items[0].status.containerStatuses[0].lastState.terminated.reason}"
        ),
        "Completed"
    );
}

#[test]
fn a_cronjob_is_stored_and_the_editor_says_its_controller_may_come_later() {
    let mut s = Session::new(1);
    let report = s.apply_text(
        "cron.yaml",
        "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: hello}\nspec:\n  schedule: \"*/1 * * * *\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          containers: [{name: hello, image: busybox, command: [date]}]\n          restartPolicy: OnFailure\n",
    );
    assert!(report.ok, "{report:?}");
    let text = format!("{report:?}");
    assert!(
        text.contains(
            "no controller acts on it in the playground (the CronJob controller may come later"
        ),
        "{text}"
    );
    s.advance_to(120_000, usize::MAX);
    assert_eq!(s.kubectl("get jobs -o name").stdout, "");
}

#[test]
fn a_job_pod_deleted_by_hand_counts_as_a_failure_and_is_replaced() {
    let mut s = started(&PI.replace(
        r#"["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]"#,
        r#"["sleep", "30"]"#,
    ));
    s.advance_to(5_000, usize::MAX);
    let pod = s.kubectl("get pods -o name").stdout.trim().to_string();
    assert!(pod.starts_with("pod/pi-"), "{pod}");
    assert!(s.kubectl(&format!("delete {pod} --wait=false")).ok);
    s.advance_to(200_000, usize::MAX);
    assert_eq!(jsonpath(&mut s, "job pi", "{.status.failed}"), "1");
    assert_eq!(jsonpath(&mut s, "job pi", "{.status.succeeded}"), "1");
    assert!(s.kubectl("get job pi").stdout.contains("Complete"));
}

#[test]
fn a_pod_held_by_a_finalizer_goes_once_cleared_after_the_kubelet_confirmed_its_deletion() {
    let mut s = crate::support::applied(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: held, finalizers: [example.com/hold]}\nspec:\n  containers: [{name: c, image: \"nginx:1.27\"}]\n",
    );
    s.advance_to(20_000, usize::MAX);
    assert!(s.kubectl("delete pod held --wait=false").ok);
    // The kubelet stops it and confirms with a grace-0 delete; the finalizer still holds it.
    s.advance_to(60_000, usize::MAX);
    assert_eq!(s.kubectl("get pods -o name").stdout, "pod/held\n");
    assert_eq!(
        jsonpath(&mut s, "pod held", "{.metadata.deletionGracePeriodSeconds}"),
        "0"
    );
    assert!(
        s.kubectl(r#"patch pod held --type=merge -p '{"metadata":{"finalizers":null}}'"#)
            .ok
    );
    s.advance_to(61_000, usize::MAX);
    assert_eq!(s.kubectl("get pods -o name").stdout, "");
}

#[test]
fn fail_job_pods_makes_the_next_pods_fail_once_and_the_job_backs_off_then_completes() {
    let mut s = started(&PI.replace(
        r#"["perl", "-Mbignum=bpi", "-wle", "print bpi(2000)"]"#,
        r#"["sh", "-c", "sleep 2; exit 0"]"#,
    ));
    let fault: kubeloop::sim::faults::Fault =
        serde_json::from_str(r#"{"type": "FailJobPods", "job": "pi", "count": 2}"#)
            .expect("a fault");
    let said = s.inject(fault).expect("applied");
    assert_eq!(said, "the next 2 pod(s) of Job default/pi will exit 1");
    s.advance_to(180_000, usize::MAX);
    assert_eq!(jsonpath(&mut s, "job pi", "{.status.failed}"), "2");
    assert_eq!(jsonpath(&mut s, "job pi", "{.status.succeeded}"), "1");
    assert!(s.kubectl("get job pi").stdout.contains("Complete"));
    let phases = jsonpath(&mut s, "pods", "{.items[*].status.phase}");
    let mut phases: Vec<&str> = phases.split(' ').collect();
    phases.sort();
    assert_eq!(phases, ["Failed", "Failed", "Succeeded"]);
    let unknown: kubeloop::sim::faults::Fault =
        serde_json::from_str(r#"{"type": "FailJobPods", "job": "nope"}"#).expect("a fault");
    assert_eq!(
        s.inject(unknown),
        Err("jobs.batch \"nope\" not found".into())
    );
}

#[test]
fn the_cluster_view_shows_a_jobs_failures_and_the_back_off_before_its_next_pod() {
    use kubeloop::viewmodel::inspect::JobProgress;
    let mut s = started(FLAKY);
    // The first pod has failed (about 2 s of work after its start); the next waits 10 s.
    s.advance_to(12_000, usize::MAX);
    let jobs = JobProgress::all(&s.sim);
    assert_eq!(jobs.len(), 1);
    let j = &jobs[0];
    assert_eq!((j.name.as_str(), j.status), ("flaky", "Running"));
    assert_eq!(j.failed, 1);
    let wait = j.next_pod_in.expect("a back-off");
    assert!((1..=10).contains(&wait), "{wait}");
    assert_eq!(
        j.words(),
        format!("0/1 done · 1 failed of 2 allowed · back-off: next pod in {wait}s")
    );
    s.advance_to(300_000, usize::MAX);
    let j = &JobProgress::all(&s.sim)[0];
    assert_eq!(j.status, "Failed");
    assert!(j.finished());
    assert_eq!(j.words(), "0/1 done · 3 failed of 2 allowed");
}
