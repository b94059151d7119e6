"""XS3 (XMOS lib_nn) lowering of int8 TFLite / ONNX layers, their simulation, and the export.

The kernels compute what lib_nn's own portable C computes, bit for bit
(``tests/xs3/test_libnn_golden.py``; docs/semantics.md, "XS3 (lib_nn)").

- arithmetic: :mod:`.vpu` (saturating accumulation, vlsat, BSO / BSS output stages), :mod:`.bso` (BSO / BSS
  tensors from TFLite quantization), :mod:`.window` and :mod:`.order` (lib_nn's window and accumulation order);
- the kernels, one file per lib_nn family: :mod:`.kernels_conv`, :mod:`.kernels_depthwise`, :mod:`.kernels_fc`,
  :mod:`.kernels_add`, :mod:`.kernels_pool`, :mod:`.kernels_misc`, :mod:`.kernels_im2col`; their one table
  (:mod:`.kernel_table`: every stage reads each kernel's descriptor there); :mod:`.kernels_fast` and
  :mod:`.fused_stage`: the same integers in a few exact BLAS / integer passes;
- the lowering: :mod:`.replace` (its rules :mod:`.replace_rules`, :mod:`.replace_ops`, :mod:`.replace_lut`: the
  per-tensor activations as lookup8 tables of LiteRT's int8 arithmetic, :mod:`.litert_int8`, and of
  onnxruntime's for ONNX files, :mod:`.ort_int8`), :mod:`.legalize`, :mod:`.shapes`, :mod:`.lower`; into the
  one graph: :mod:`.graph_pass`, :mod:`.graph_ops`, :mod:`.convert_ranges` (input ranges fixed at convert time);
- checks: :mod:`.layer_agreement` (per-layer agreement with LiteRT / onnxruntime; the reasons below the bar:
  :mod:`.agreement_notes`), :mod:`.verification` (the
  kernels' rows of ``hexnn-import ops``); :mod:`.run`: the XS3 execution path;
- the export (``hexnn-import xs3-export``): :mod:`.export`; :mod:`.c_header` writes the per-layer C header;
  :mod:`.network_desc` describes the lowered network in Python (layers, tensors, the arena plan of
  :mod:`.arena`) and :mod:`.c_network` writes that description as the network's C header; :mod:`.c_runner`
  (:mod:`.c_runner_c`, :mod:`.c_runner_sh`) writes the C runner of that header on lib_nn's kernels, and
  :mod:`.c_runner_replay` / :mod:`.c_runner_synthetic` are what its golden files record and replay.
"""
