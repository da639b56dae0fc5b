// The lesson page's buttons and checkpoints, driving the two labs through the Kubeloop embed
// SDK (kubeloop-embed.js). Everything the labs report is shown with textContent, never as HTML.
(function () {
  'use strict';

  var $ = function (sel) { return document.querySelector(sel); };
  var all = function (sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); };
  var say = function (id, text) { var el = $(id); if (el) el.textContent = text; };

  // A lab's clock button says what pressing it does next, following the lab's real state (its
  // own toolbar inside the iframe can start or pause it too).
  var clockButton = function (lab, button) {
    var show = function (playing) {
      if (button) button.textContent = playing ? '❚❚ Pause the clock' : '▶ Start the clock';
      return playing;
    };
    return {
      sync: function () { return lab.getState().then(function (s) { return show(s.playing); }); },
      show: show,
      toggle: function () {
        return lab.getState().then(function (s) {
          return (s.playing ? lab.pause() : lab.play()).then(function () { return show(!s.playing); });
        });
      },
      play: function () { return lab.play().then(function () { return show(true); }); },
    };
  };

  // ---------------------------------------------------------------- lab 1: the Deployment

  var lab1 = window.Kubeloop && Kubeloop.get('lab1');
  if (lab1) {
    var check = $('#lab1-check');
    var everConverged = false;
    var refreshTimer = null;

    var refresh = function () {
      if (refreshTimer) return;
      refreshTimer = setTimeout(function () {
        refreshTimer = null;
        lab1.getState().then(function (s) {
          clock1.show(s.playing);
          var d = s.deployments[0];
          say('#lab1-spec', d ? String(d.replicas) : '–');
          say('#lab1-ready', d ? String(d.ready) : '–');
          say('#lab1-available', d ? String(d.available) : '–');
        }).catch(function () {});
      }, 150);
    };

    var setCheck = function (state, detail) {
      check.setAttribute('data-state', state);
      say('#lab1-check-detail', detail);
    };

    lab1.on('loaded', function () {
      all('[data-lab1]').forEach(function (b) { b.disabled = false; });
      refresh();
    });
    lab1.on('event', function (e) {
      say('#lab1-event', e.reason + ' · ' + e.object + ': ' + e.message);
      refresh();
    });
    lab1.on('applied', refresh);
    lab1.on('fault', refresh);
    lab1.on('converged', function (c) {
      var d = c.deployments[0] || { ready: 0, replicas: 0 };
      everConverged = true;
      setCheck('done', 'Converged at ' + c.clock + ': ' + d.ready + ' of ' + d.replicas +
        ' replicas ready and available. The loops have nothing left to do, until something changes.');
      refresh();
    });
    lab1.on('diverged', function (c) {
      if (!everConverged) return;
      setCheck('healing', 'A gap opened at ' + c.clock + '. The controllers have noticed and are closing it…');
      refresh();
    });

    var clock1 = clockButton(lab1, $('[data-lab1="play"]'));
    var play1 = clock1.play;

    var actions = {
      play: function () {
        return clock1.toggle().then(function (playing) {
          say('#lab1-say', playing ? 'The clock is running. Watch the Events.' : 'The clock is paused.');
        });
      },
      kill: function () {
        return lab1.getState().then(function (s) {
          var pod = s.pods.filter(function (p) { return p.phase === 'Running' && p.ready && p.status === 'Running'; })[0];
          if (!pod) {
            say('#lab1-say', 'No pod is running yet: start the clock and wait for the pods to turn ready.');
            return null;
          }
          return lab1.inject({ type: 'DeletePod', pod: pod.name }).then(function () {
            say('#lab1-say', 'Deleted ' + pod.name + '. Nothing will bring it back; watch what replaces it.');
            return play1();
          });
        });
      },
      scale: function () {
        return lab1.kubectl('scale deployment web --replicas=5').then(function (out) {
          say('#lab1-say', (out.ok ? out.stdout : out.stderr).trim() + ': the spec now asks for five.');
          return play1();
        });
      },
      again: function () {
        everConverged = false;
        setCheck('pending', 'Every replica updated, ready and available, and nothing left over. Start the clock and watch this turn green.');
        say('#lab1-event', 'nothing yet: the clock is stopped');
        return lab1.load(lab1.text).then(function () {
          clock1.sync();
          say('#lab1-say', 'Back to 00:00 with the original Deployment.');
          refresh();
        });
      },
    };
    all('[data-lab1]').forEach(function (b) {
      b.addEventListener('click', function () {
        var act = actions[b.getAttribute('data-lab1')];
        if (act) act().catch(function (e) { say('#lab1-say', 'The lab said: ' + e.message); });
      });
    });
  }

  // ---------------------------------------------------------------- lab 2: a node dies

  var lab2 = window.Kubeloop && Kubeloop.get('lab2');
  if (lab2) {
    var list = $('#lab2-checks');
    var rows = {};

    var renderChecks = function (checks) {
      list.textContent = '';
      rows = {};
      checks.forEach(function (c) {
        var li = document.createElement('li');
        li.setAttribute('data-state', c.passed === true ? 'passed' : c.passed === false ? 'failed'
          : c.waitingFor ? 'not-started' : 'pending');
        li.title = c.message;
        var name = document.createElement('span');
        name.textContent = c.name;
        li.appendChild(name);
        if (c.passed == null && c.waitingFor) {
          var when = document.createElement('small');
          when.className = 'check-when';
          when.textContent = c.waitingFor;
          li.appendChild(when);
        }
        list.appendChild(li);
        rows[c.name] = li;
      });
    };
    var mark = function (state) {
      return function (c) {
        var li = rows[c.name];
        if (li) { li.setAttribute('data-state', state); li.title = c.message; }
      };
    };

    // Each lesson button is offered when the lesson offers its step ("Power off node-2" once web
    // is Available), so following the page's buttons in order is following the lesson.
    var stepButtons = all('[data-lab2][data-step]');
    var clock2 = clockButton(lab2, $('[data-lab2="play"]'));
    var refreshSteps = function () {
      return lab2.lessonSteps().then(function (steps) {
        stepButtons.forEach(function (b) {
          var st = steps[Number(b.getAttribute('data-step'))];
          if (!st) return;
          b.disabled = !st.enabled || st.done;
          b.title = st.done ? 'Done' : st.enabled ? '' : 'Comes ' + st.waitingFor;
          b.setAttribute('data-state', st.done ? 'done' : st.enabled ? 'offered' : 'waiting');
        });
        return steps;
      }).catch(function () {});
    };
    var refreshAll = function () {
      refreshSteps();
      clock2.sync().catch(function () {});
      lab2.runChecks().then(renderChecks).catch(function () {});
    };

    lab2.on('loaded', function () {
      all('[data-lab2]:not([data-step])').forEach(function (b) { b.disabled = false; });
      say('#lab2-say', 'Loaded at 00:00. Start the clock: once web is Available, power off node-2, then play fast: the wait is long on purpose.');
      refreshAll();
    });
    lab2.on('checkPassed', function (c) { mark('passed')(c); refreshAll(); });
    lab2.on('checkFailed', function (c) { mark('failed')(c); refreshAll(); });
    lab2.on('fault', function (f) {
      // The description is "<the fault> — <what it did>": the page shows what it did.
      var parts = String(f.description).split(' — ');
      say('#lab2-say', parts.length > 1 ? parts.slice(1).join(' — ') : f.description);
      refreshAll();
    });

    var actions2 = {
      play: function () { return clock2.toggle(); },
      down: function () {
        return lab2.inject({ type: 'NodeDown', node: 'node-2' }).then(clock2.play);
      },
      fast: function () { return lab2.setSpeed(20).then(clock2.play); },
      up: function () { return lab2.inject({ type: 'NodeUp', node: 'node-2' }); },
    };
    all('[data-lab2]').forEach(function (b) {
      b.addEventListener('click', function () {
        var act = actions2[b.getAttribute('data-lab2')];
        if (act) act().catch(function (e) { say('#lab2-say', 'The lab said: ' + e.message); });
      });
    });
  }
})();
