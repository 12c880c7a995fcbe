// The workspace's live parts: charts from the data a page carries (no inline script),
// and a job's progress polled from /api/jobs/ID until it finishes.
"use strict";

function money(v) { return "$" + Math.round(v).toLocaleString("en-US"); }

function data(id) {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
}

function cashFlowChart() {
  const d = data("cashflow-data");
  if (!d || !window.Chart) return;
  const kinds = [["rented_usd", "rented", "#4e79a7"], ["owned_opex_usd", "owned opex", "#59a14f"],
                 ["commitments_usd", "commitments", "#f28e2b"], ["capex_usd", "capex", "#e15759"]];
  const sets = kinds.map(([k, label, color]) => ({type: "bar", label, data: d[k], backgroundColor: color, stack: "m", yAxisID: "y"}));
  sets.push({type: "line", label: "cumulative", data: d.cumulative_usd, borderColor: "#222", yAxisID: "y2", pointRadius: 0});
  if (d.budget_usd) sets.push({type: "line", label: "budget", data: d.months.map(() => d.budget_usd), borderColor: "#a00", borderDash: [6, 4], yAxisID: "y2", pointRadius: 0});
  new Chart(document.getElementById("cashflow-chart"), {
    data: {labels: d.months, datasets: sets},
    options: {maintainAspectRatio: false, animation: false,
      scales: {y: {stacked: true, beginAtZero: true, title: {display: true, text: "USD per month"}, ticks: {callback: money}},
               y2: {position: "right", beginAtZero: true, title: {display: true, text: "USD cumulative"}, ticks: {callback: money}, grid: {drawOnChartArea: false}},
               x: {stacked: true}}}
  });
}

function compareChart() {
  const d = data("compare-data");
  if (!d || !window.Chart) return;
  const months = d.a.months.length >= d.b.months.length ? d.a.months : d.b.months;
  new Chart(document.getElementById("compare-chart"), {
    type: "line",
    data: {labels: months, datasets: [
      {label: "A cumulative", data: d.a.cumulative_usd, borderColor: "#4e79a7", pointRadius: 0},
      {label: "B cumulative", data: d.b.cumulative_usd, borderColor: "#e15759", pointRadius: 0}]},
    options: {maintainAspectRatio: false, animation: false, scales: {y: {beginAtZero: true, ticks: {callback: money}, title: {display: true, text: "USD"}}}}
  });
}

function pollJob() {
  const box = document.getElementById("job");
  if (!box) return;
  const id = box.dataset.job;
  const show = (j) => {
    document.getElementById("job-status").textContent = j.status;
    document.getElementById("job-status").className = "status-" + j.status;
    document.getElementById("job-stage").textContent = j.stage;
    document.getElementById("job-progress").value = j.progress;
    if (j.started_at) {
      const end = j.finished_at ? new Date(j.finished_at) : new Date();
      document.getElementById("job-elapsed").textContent = ((end - new Date(j.started_at)) / 1000).toFixed(1) + " s";
    }
    const err = document.getElementById("job-error");
    err.textContent = j.error; err.hidden = !j.error;
    if (j.plan_id) {
      document.getElementById("job-plan-link").href = "/plans/" + j.plan_id;
      document.getElementById("job-plan").hidden = false;
    }
    const open = j.status === "queued" || j.status === "running";
    document.getElementById("cancel-form").hidden = !open;
    document.getElementById("rerun-form").hidden = !["interrupted", "cancelled", "failed", "timed_out"].includes(j.status);
    return open;
  };
  const tick = () => fetch("/api/jobs/" + id).then(r => r.json()).then(j => { if (show(j)) setTimeout(tick, 500); })
    .catch(() => setTimeout(tick, 2000));
  tick();
}

document.addEventListener("DOMContentLoaded", () => { cashFlowChart(); compareChart(); pollJob(); });
