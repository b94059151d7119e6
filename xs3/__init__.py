"""XS3 (XMOS lib_nn) lowering of int8 TFLite conv / fully-connected layers.

- :mod:`.vpu`: the VPU arithmetic (saturating VLMACCR accumulation, vlsat, BSO / BSS output stages);
- :mod:`.bso`: BSO / BSS tensors from TFLite quantization (pure functions);
- :mod:`.kernels_conv`, :mod:`.kernels_depthwise`, :mod:`.kernels_fc`: the simulated kernels and weight layouts;
- :mod:`.layers`, :mod:`.replace`, :mod:`.legalize`, :mod:`.lower`: the lowering (Replace, then Legalize);
- :mod:`.agree`: per-layer agreement with LiteRT; :mod:`.run`: the XS3 execution path;
- :mod:`.export`, :mod:`.c_header`: ``hexnn-import xs3-export``.
"""
