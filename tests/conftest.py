"""Shared test setup: the helpers in hexnn_import.testing find this checkout's ``models/``
even when the package is installed from a wheel (as CI does) rather than editable; the slow cases
(:data:`SLOW`) are marked ``slow`` and left to ``python bench/slow_tests.py``; ``HEXNN_TEST_CPU_LOG`` logs
each test's cost in CPU seconds (``tools/suite_cost.py``)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HEXNN_MODELS_DIR", str(Path(__file__).resolve().parents[1] / "models"))
# compare's piped progress lines (every 10 s) only where a test asks for them (tests/compare/test_progress.py): a
# test that expects one stderr line must not get a progress line first because the machine is slow today
os.environ.setdefault("HEXNN_PROGRESS_EVERY", "3600")


# ---- the suite's cost per test in CPU seconds, whatever else the machine runs (issue 34: the 5-minute budget)
if os.environ.get("HEXNN_TEST_CPU_LOG"):
    import json
    import resource

    def _cpu() -> float:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item, nextitem):  # type: ignore[no-untyped-def]
        """Append ``{"test": nodeid, "cpu_s": ...}`` (setup, call and teardown, child processes included) to the
        file ``HEXNN_TEST_CPU_LOG`` names; ``tools/suite_cost.py`` sums it."""
        start = _cpu()
        yield
        with open(os.environ["HEXNN_TEST_CPU_LOG"], "a", encoding="utf-8") as log:
            log.write(json.dumps({"test": item.nodeid, "cpu_s": round(_cpu() - start, 3)}) + "\n")


#: the costliest cases (CPU seconds measured with HEXNN_TEST_CPU_LOG, tools/suite_cost.py), which keep the suite
#: above its 5 minutes on 2 cores (issue 34): node-id prefix -> what still covers it in the suite. They run with
#: ``python bench/slow_tests.py`` (pytest -m slow); :data:`KEEP` are cases under a prefix that stay in the suite.
SLOW: dict[str, str] = {
    "tests/real/test_real_models.py::test_converts_with_no_flags[":
        "54 models, 38 s: test_every_model_runs_as_converted imports, prepares and runs every one of them",
    "tests/real/test_real_models.py::test_float_model_calibrated_reaches_30_db[":
        "18 models, 43 s: bench/real_models.py prints the same figures; the families' float files stay",
    "tests/real/test_real_models.py::test_quantized_model_below_the_bar_stays_within_its_own_quantization_error[":
        "22 models, 27 s: test_quantized_model_agrees_with_its_runtime and the families' tests stay",
    "tests/real/test_real_models.py::test_below_the_bar_as_close_to_litert_as_litert_is_to_itself[":
        "14 models, 13 s: bench/real_models.py prints the same spread",
    "tests/real/test_real_models.py::test_refused_models_run_with_input_shape[":
        "4 OCR models, 17 s: their refusal stays (KEEP) and tests/importers/test_input_shapes_all_at_once_real.py",
    "tests/test_newcomer_walkthrough.py::test_own_model_with_no_flags[torch_qdq_onnx]":
        "8 s: the keras int8 case of the same walkthrough stays",
    "tests/test_readme_commands.py::test_readme_command[python bench/":
        "the README's bench scripts (27 s): benchmarks, each also runnable alone",
    "tests/test_readme_commands.py::test_readme_command[hexnn-import compare MODEL --data D.npz":
        "24 s: the digits compare command of the README and tests/compare/test_cli_compare.py stay",
    "tests/test_readme_commands.py::test_readme_command[x=1,3,160,160]":
        "6 s, the RapidOCR detector: tests/importers/test_input_shapes_all_at_once_real.py converts it at that shape",
    "tests/test_readme_commands.py::test_readme_command[--input-shape x=1,3,48,192]":
        "4 s, the RapidOCR classifier: test_every_model_runs_as_converted runs it at the manifest's shape",
    "tests/test_readme_commands.py::test_readme_command[... --input-shape NAME=4,3,224,224]":
        "6 s, a batch of 4 of a torchvision model: tests/test_cli_batch.py sets batches through the CLI on small models",
}
SLOW.update({f"tests/real/test_runtime_ranges_run.py::test_float_model_runs_on_degenerate_inputs[{name}]":
             "1.5-3.4 s each: test_every_model_runs_as_converted runs it on a blank input after a photo; the two that "
             "refused before the range floor (log-mel conv1d, Silero VAD) stay"
             for name in ("torch_yolov8n_digits_float.onnx", "rapidocr_ppocrv3_det.onnx",
                          "torch_efficientnet_b0_float.onnx", "rapidocr_ppocr_mobile_v2_cls.onnx",
                          "torch_yolo_tiny_float.onnx", "mediapipe_selfie_segmentation.tflite")})
SLOW.update({f"tests/xs3/test_c_runner_golden.py::test_run_xs3_reproduces_the_c_runner[{name}]":
             "1.5-4 s each (import, lowering, two runs of the XS3 path): the suite keeps the other 23 models, which use "
             "every kernel these do (the small CNNs, MobileNet v1 / v2 / v3, ResNet-18, the MediaPipe models)"
             for name in ("keras_mobilenet_v2_1.0_224_int8", "keras_efficientnet_b0_int8",
                          "keras_mobilenet_v3_small_int8_floatio", "mediapipe_selfie_segmentation_aeq_int8",
                          "rapidocr_ppocr_mobile_v2_cls_qdq", "rapidocr_ppocrv3_det_qdq", "torch_efficientnet_b0_qdq",
                          "torch_efficientnet_b0_qop", "torch_mobilenet_v3_small_qdq", "torch_mobilenet_v3_small_qop",
                          "torch_shufflenet_v2_qdq", "torch_shufflenet_v2_qop", "torch_squeezenet_qdq",
                          "torch_squeezenet_qop", "torch_yolo_tiny_qdq")})
SLOW.update({f"tests/optimizer/test_prepare_golden.py::test_prepared_graph_is_prepare_c_s[{name}]":
             "import + prepare 2-6 s each: the suite keeps the smaller models of the same converters and op mixes"
             for name in ("rapidocr_ppocr_mobile_v2_cls", "rapidocr_ppocrv3_det", "rapidocr_ppocrv3_det_qdq",
                          "torch_efficientnet_b0_float", "torch_efficientnet_b0_qdq", "keras_efficientnet_b0_int8",
                          "torch_shufflenet_v2_float", "torch_shufflenet_v2_qdq", "torch_shufflenet_v2_qop",
                          "torch_yolo_tiny_float", "torch_yolo_tiny_qdq", "torch_mobilenet_v3_small_float",
                          "keras_mobilenet_v3_small_digits_float")})
SLOW.update({f"tests/optimizer/test_prepare_golden.py::{test}[{name}]":
             "the YOLOv8n digits detector, 4-6 s: the other pending models hold the same rules"
             for test in ("test_pending_models_leave_prepare_c_only_where_an_op_is_missing",
                          "test_pending_lists_are_prepare_c_s_once_the_d32_ops_exist")
             for name in ("torch_yolov8n_digits_float", "torch_yolov8n_digits_qdq")})
SLOW.update({
    "tests/importers/test_recurrent.py::test_recurrent_against_onnxruntime[lstm_bidirectional]":
        "7.5 s: the forward lstm and the reverse gru_reverse_initial_state cases stay (a bidirectional LSTM is the "
        "two concatenated), and the TFLite keras_bilstm_seq case",
    "tests/importers/test_recurrent_tflite.py::test_keras_loop_against_litert[keras_lstm_last]":
        "3.5 s: keras_lstm_seq stays (the same layer; this one keeps the last step only)",
    "tests/importers/test_recurrent_tflite.py::test_keras_loop_against_litert[keras_gru_last]":
        "3.5 s: keras_gru_seq stays (the same layer; this one keeps the last step only)",
    "tests/compare/test_parallel.py::test_a_killed_run_resumes_to_the_same_report":
        "6.5 s: tests/robust/test_resume_ledger.py resumes to the uninterrupted report, and "
        "tests/robust/test_cluster_faults.py after losing every worker",
    "tests/robust/test_orphan_workers.py::test_killing_compare_jobs_2_leaves_no_worker[15]":
        "4 s of waiting: the SIGKILL case stays (a worker must notice its parent's death with no handler run)",
})
SLOW.update({f"tests/ops/test_hvx_network.py::test_network_equals_device[{name}]":
             "1-3.5 s each (the engine on 4 inputs of a big model): the suite keeps the other models, which hold every "
             "traced cause (Mean, the 1x1 AvgPool_d32, the depthwise scales) and every converter"
             for name in ("torch_efficientnet_b0_float", "rapidocr_ppocrv3_det", "digits_float",
                          "rapidocr_ppocr_mobile_v2_cls", "keras_efficientnet_b0_int8", "torch_mobilenet_v3_small_float",
                          "rapidocr_ppocrv3_det_qdq", "torch_efficientnet_b0_qdq", "torch_shufflenet_v2_qop",
                          "mediapipe_selfie_segmentation_aeq_int8", "rapidocr_ppocr_mobile_v2_cls_qdq",
                          "torch_shufflenet_v2_float", "torch_yolo_tiny_qdq", "torch_shufflenet_v2_qdq",
                          "torch_efficientnet_b0_qop", "keras_mobilenet_v2_1.0_224_int8", "torch_yolo_tiny_float",
                          "mediapipe_selfie_segmentation")})
SLOW.update({f"tests/ops/test_hvx_network.py::test_network_equals_device[{name}]":
             "2.3-5 s each (family models, bit-exact, no KNOWN cause): the suite keeps the other 26 family models, "
             "the same converters and ops"
             for name in ("torch_yolov8n_digits_qdq", "torch_yolov8n_digits_float", "keras_blaze_digits_float",
                          "keras_mobilenet_v3_small_digits_float")})
SLOW.update({
    **{f"tests/importers/test_recurrent.py::test_recurrent_against_onnxruntime[{c}]":
       "3.6-5.5 s each: the suite keeps [lstm] and [gru] (every gate formula); these add a batch of 2, a reverse "
       "direction with an initial state, linear_before_reset" for c in
       ("lstm_batch2_initial_state", "gru_reverse_initial_state", "gru_linear_before_reset")},
    "tests/importers/test_recurrent_tflite.py::test_keras_loop_against_litert[keras_bilstm_seq]":
        "8.6 s: the suite keeps keras_lstm_seq / keras_gru_seq and the bidirectional tfk_bilstm_seq",
    **{f"tests/real/test_families.py::test_family_model_runs_and_classifies_as_its_runtime[{m}]":
       "3.2-4.4 s each: their float twins and the keras recurrent family models stay in the suite"
       for m in ("torch_lstm_digits_qdq.onnx", "torch_gru_digits_qdq.onnx")},
})
SLOW.update({
    "tests/compare/test_parallel.py::test_local_workers_and_a_dask_cluster_give_the_report_of_one_process":
        "13 s (a local Dask cluster starts): tests/robust/test_cluster_faults.py keeps a Dask cluster's report "
        "(every worker lost, the finished shards resumed) and this file the order-free exact sums and merge",
    "tests/robust/test_fuzz_graph.py::test_fuzz_graph_files_fail_only_with_project_errors":
        "5.5 s: test_fuzz_pipeline.py's [tflite] case fuzzes the whole pipeline, test_fuzz_tflite / _onnx the readers",
    **{f"tests/robust/test_fuzz_pipeline.py::test_fuzz_pipeline_has_no_internal_error[{fmt}]":
       "4.6-4.8 s each: the [tflite] case stays (the same stages), test_fuzz_onnx / _tflite the readers"
       for fmt in ("npz", "graph")},
    "tests/real/test_families.py::test_family_model_runs_and_classifies_as_its_runtime["
    "keras_lstm_keras3_digits_float.tflite]":
        "2.7 s: keras_lstm_digits_float / _int8 stay (the same LSTM, fused; the WHILE loop form is in "
        "tests/importers/test_recurrent_tflite.py)",
    "tests/test_newcomer_walkthrough.py::test_own_model_with_no_flags[keras_int8_tflite]":
        "4.8 s: [torch_qdq_onnx] stays (the same walk), and the README's keras int8 commands run in "
        "tests/test_readme_commands.py",
    "tests/importers/test_recurrent_tflite.py::test_keras_loop_against_litert[keras_gru_seq]":
        "3.7 s: keras_lstm_seq stays (the same WHILE loop import), and the keras GRU family models "
        "(tests/real/test_families.py) against LiteRT",
})
SLOW.update({
    "tests/compare/test_cli_compare.py::test_float_model_is_its_own_reference_with_calibration":
        "4.8 s: the README's `--calibration DATA.npz` compare command runs in tests/test_readme_commands.py",
    "tests/test_cli_run_timing.py::test_repeat_reports_the_median_of_the_runs":
        "3.4 s: the README's `run MODEL --input X --repeat N` command runs in tests/test_readme_commands.py",
    "tests/robust/test_fuzz_tflite.py::test_fuzz_tflite_files_fail_only_with_project_errors":
        "3.5 s: test_fuzz_pipeline.py's [tflite] case fuzzes TFLite files through the whole pipeline",
    **{f"tests/real/test_families.py::test_family_model_runs_and_classifies_as_its_runtime[{m}]":
       "1.6-2.9 s each: the int8 twin stays (the same network and importer)"
       for m in ("keras_mobilenet_v3_small_digits_float.tflite", "keras_gru_unrolled_digits_float.tflite")},
    "tests/real/test_runtime_ranges_run.py::test_float_model_runs_on_degenerate_inputs["
    "keras_mobilenet_v3_small_float.tflite]":
        "2.2 s: test_every_model_runs_as_converted runs it on a blank input after a photo; the torch "
        "MobileNetV3-small float stays",
    "tests/real/test_real_models.py::test_quantized_model_agrees_with_its_runtime["
    "keras_mobilenet_v2_1.0_224_int8.tflite]":
        "2.1 s (224x224): the 96x96 keras MobileNet v1 / v2 int8 files stay (the same converter and ops)",
    **{f"tests/ops/test_hvx_network.py::test_network_equals_device[{name}]":
       "0.7-1.3 s each: the keras int8 / int8_floatio MobileNetV3-small files and the digits int8 one stay (the "
       "same network, hard-swish and squeeze-excite)"
       for name in ("keras_mobilenet_v3_small_float", "torch_mobilenet_v3_small_qop",
                    "keras_mobilenet_v3_small_digits_int8_floatio", "torch_mobilenet_v3_small_qdq")},
})
KEEP: tuple[str, ...] = ("tests/real/test_real_models.py::test_converts_with_no_flags[rapidocr",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the cases of :data:`SLOW` ``slow`` (the suite's addopts deselect them: ``-m "not slow"``)."""
    for item in items:
        if item.nodeid.startswith(tuple(SLOW)) and not item.nodeid.startswith(KEEP):
            item.add_marker(pytest.mark.slow)
