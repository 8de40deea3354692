"""Evaluation: first-error metrics (ProcessBench), best-of-N curves, failure-mode audits, plots.

Contract: functions read traces plus per-step scores (``list[list[float]]`` from any StepScorer) or a
predictor (scorer, judge, label source); faithfulness reads a Policy; gold comes from labels (``gold`` on
the world, ``human:processbench`` on ProcessBench files). Each command (``prmkit eval processbench |
agentprocessbench | bon | faithfulness | monitorability | transfer | fewshot``, ``prmkit audit``) is a typed
config in config.py, ``run_x(config)`` in its feature's module beside the pure core it calls
(``run_processbench`` in processbench.py, ``run_agentprocessbench``, ``run_eval_bon`` in bon_curves.py,
``run_audit`` in audits.py, ``run_faithfulness``, ``run_monitorability``, ``run_transfer``, ``run_fewshot``), and one
entry in commands.py, from which the CLI is built.

- ``processbench.py``  first-error prediction, acc_error / acc_correct / F1, threshold tuning, files
- ``agentprocessbench.py`` AgentProcessBench's step_micro_acc, firsterroracc, as its own script computes them
- ``mrben.py``         MR-Ben's MR-Score per subject (solution MCC, first-error-step accuracy; reasons need a judge)
- ``bbm.py``           BIG-Bench Mistake's mistake-location accuracy per task, beside first-error F1 and AUROC
- ``deltabench.py``    DeltaBench's section-level error detection (precision, recall, F1 of error sections)
- ``hard2verify.py``   Hard2Verify's balanced accuracy and balanced F1 (step, response, ErrorID), from the paper
- ``stepbench.py``     the maths and predictions those four step-level benchmarks share
- ``prmbench.py``      PRMBench's PRMScore per class and slice (with and without PRM800K-train items); Socratic-PRMBench
- ``prmbench_metric.py`` PRMBench's step counts, F1s and PRMScore, and the official result dictionary
- ``prmbench_report.py`` the result of ``prmkit eval prmbench`` and its Markdown tables
- ``overlap.py``       which benchmarks a PRM's training data overlaps (PRMBench on PRM800K), read from its card
- ``bon_curves.py``    accuracy vs N for PRM aggregations, ORM, majority, weighted vote, oracle; honest
                       accuracy (a pick that games the task counts wrong) where a world has loopholes
- ``audits.py``        runs every audit below and writes audit.json + plots
- ``gaming.py``        verifier gaming (Goodhart gap vs selection pressure), process-to-outcome shift
- ``collapse.py``      process collapse (fidelity AUC), lucky answers
- ``calibration.py``   reliability diagrams, ECE, length bias
- ``loophole.py``      the loophole audit: does a verifier reward a trajectory that games the task?
- ``faithfulness.py``  do a policy's steps cause its answer? Lanham et al.'s interventions, causal dependence
- ``visibility.py``    views of a trace (raw, summary, actions, answer) and first-error metrics under each
- ``monitorability.py`` a scorer or judge as a monitor of a behaviour: TPR / TNR / g-mean² under each view
- ``transfer.py``    one scorer at one threshold in a source and target settings: F1, AUROC, paired gaps
- ``fewshot.py``     a PRM fine-tuned on k traces of a target setting (via train_prm): F1, AUROC, gains over k = 0
- ``seeds.py``       a model's training seeds on the same traces, and the first-error Stats over seeds × problems
- ``study.py``         a study's table over seeds and problems: estimates with crossed-bootstrap intervals
- ``views.py``         results views: docs tables (code world, few-shot, monitors, transfer, critic, seed tables)
                       rendered from committed results files
- ``suite.py``         ``evaluate_world``: the whole evaluation of a scorer on fresh world data
- ``commands.py``      the command registry: name, config and run function of each evaluation command
- ``config.py``        the commands' typed configs (eval processbench | agentprocessbench | bon, audit) and
  WorldEvalSettings (no numpy: ``--help`` reads them)
- ``gold.py``          gold views of traces (validity, outcome, grouping, the loophole step)
- ``scored.py``        a scorer spec turned into step scores, its name, kind and stored threshold
- ``plots.py``         matplotlib figures (PNG)
"""
