// The analysis pages (carbon frontier, two-stage plan): their charts from the data the
// page carries (no inline script), and the latest job's progress polled from
// /api/jobs/ID; when the job is done the page is loaded again to show its result.
"use strict";

function usd(v) { return "$" + Math.round(v).toLocaleString("en-US"); }

function pageData(id) {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
}

function frontierChart() {
  const d = pageData("frontier-data");
  if (!d || !window.Chart) return;
  const points = d.co2e_t.map((x, i) => ({x, y: d.cost_usd[i]}));
  new Chart(document.getElementById("frontier-chart"), {
    type: "scatter",
    data: {datasets: [{label: "least cost under a CO2e cap", data: points, showLine: true, borderColor: "#4e79a7", backgroundColor: "#4e79a7"},
      {label: "this plan", data: d.plan ? [{x: d.plan.co2e_t, y: d.plan.cost_usd}] : [], pointRadius: 8, pointStyle: "rectRot", borderColor: "#a00", backgroundColor: "#a00"}]},
    options: {maintainAspectRatio: false, animation: false,
      scales: {x: {beginAtZero: true, title: {display: true, text: "total CO2e, t"}},
               y: {beginAtZero: true, title: {display: true, text: "total cost, USD"}, ticks: {callback: usd}}}}
  });
}

function twoStageChart() {
  const d = pageData("two-stage-data");
  if (!d || !window.Chart) return;
  const sets = [["two_stage_plan_usd", "two-stage plan", "#4e79a7"], ["all_rented_usd", "everything rented", "#f28e2b"],
                ["hindsight_usd", "with hindsight", "#59a14f"]]
    .map(([k, label, color]) => ({type: "bar", label, data: d[k], backgroundColor: color}));
  sets.push({type: "line", label: "expected cost", data: d.scenarios.map(() => d.expected_cost_usd), borderColor: "#a00", borderDash: [6, 4], pointRadius: 0});
  new Chart(document.getElementById("two-stage-chart"), {
    data: {labels: d.scenarios, datasets: sets},
    options: {maintainAspectRatio: false, animation: false, scales: {y: {beginAtZero: true, ticks: {callback: usd}, title: {display: true, text: "USD"}}}}
  });
}

function pollAnalysisJob() {
  const box = document.getElementById("analysis-job");
  if (!box) return;
  const open = (s) => s === "queued" || s === "running";
  if (!open(box.dataset.status)) return;
  const show = (j) => {
    document.getElementById("job-status").textContent = j.status;
    document.getElementById("job-status").className = "status-" + j.status;
    document.getElementById("job-stage").textContent = j.stage;
    document.getElementById("job-progress").value = j.progress;
    const err = document.getElementById("job-error");
    err.textContent = j.error; err.hidden = !j.error;
    document.getElementById("cancel-form").hidden = !open(j.status);
    document.getElementById("rerun-form").hidden = !["interrupted", "cancelled", "failed", "timed_out"].includes(j.status);
    if (j.status === "done") window.location.reload();
    return open(j.status);
  };
  const tick = () => fetch("/api/jobs/" + box.dataset.job).then(r => r.json()).then(j => { if (show(j)) setTimeout(tick, 500); })
    .catch(() => setTimeout(tick, 2000));
  tick();
}

document.addEventListener("DOMContentLoaded", () => { frontierChart(); twoStageChart(); pollAnalysisJob(); });
