//! The `machinery` wing: what every controller is built from, as client-go and the kubelet
//! provide it: the informer cache, the work queue, the controller contract (sans-IO: a reconcile
//! reads a cache and returns API requests as data), the event recorder, the trace and the node's
//! container runtime. Its invariant: it knows the `api` wing and no controller, world or session.

pub mod cache;
pub mod controller;
pub mod node_runtime;
pub mod process;
pub mod recorder;
pub mod storage_backend;
pub mod trace;
pub mod workqueue;
