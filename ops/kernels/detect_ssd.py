"""SsdDetectionOutput: Caffe SSD ``DetectionOutput`` on quint8 locations and confidences
(hexagon_nn_ops.txt).

Per image ``n`` (batches = the first axis of the location tensor): priors
``P = conf.size / (batches * num_classes)``; locations hold ``P x L x 4``
values (``L = 1`` with share location, else ``num_classes``), confidences
``P x num_classes``, both dequantized; the prior data (input 13) holds
``P x 4`` prior corners ``{xmin, ymin, xmax, ymax}`` followed by ``P x 4``
variances (the variances may be absent when "variance encoded in target").
Decoding (Caffe ``DecodeBBox``, ``v`` = variance or 1 when encoded in the target):
CORNER ``prior + v * loc``; CENTER_SIZE ``c = v01 * loc01 * prior_size + prior_centre``,
``size = exp(v23 * loc23) * prior_size``; CORNER_SIZE ``prior + v * loc * prior_size``
(x with width, y with height). For each class but the background label:
confidences ``> confidence threshold``, the best ``nms top k`` (-1: all) by
descending score (equal: lower prior first), then Caffe's adaptive NMS (a
box is kept when its IoU with every kept box is ``<=`` the threshold; after a
keep, a threshold above 0.5 is multiplied by ``nms eta``). If the image keeps
more than ``keep top k`` boxes, the best ``keep top k`` scores survive.
Detections of an image are listed by class, each class by descending score;
images follow one another.

Outputs have ``batches * keep top k`` slots (``keep top k >= 1``; each image
keeps at most that many); valid detections come first, the rest are zeros
as the text says (batch index, class, confidence code 0, coordinates 0):
batch index and class ``[1,1,1,S]`` int32, confidence ``[1,1,1,S]`` quint8
(the input codes; the confidence range passes through), xmin, ymin, xmax,
ymax ``[1,1,1,S]`` float. Coordinates are not clipped (Caffe's default).
"""
from __future__ import annotations

import numpy as np

from hexnn_import.ops.boxes import descending, greedy_nms
from hexnn_import.ops.detect_io import finite_scalar, int_in
from hexnn_import.ops.int_params import int_param
from hexnn_import.ops.kernel_io import float_data, range_out, u8_codes
from hexnn_import.ops.quant import dequantize_u8
from hexnn_import.ops.registry import Kernel, KernelContext, register

CORNER, CENTER_SIZE, CORNER_SIZE = 0, 1, 2


def decode(loc: np.ndarray, prior: np.ndarray, var: np.ndarray, code: int) -> np.ndarray:
    """Caffe ``DecodeBBox`` for ``loc [P, L, 4]``, ``prior [P, 4]``, ``var [P, 4]`` -> ``[P, L, 4]``."""
    p, v = prior[:, None, :], var[:, None, :]
    pw = (p[..., 2] - p[..., 0])[..., None]
    ph = (p[..., 3] - p[..., 1])[..., None]
    if code == CORNER:
        return p + v * loc
    if code == CORNER_SIZE:
        size = np.concatenate([pw, ph, pw, ph], axis=-1)
        return p + v * loc * size
    cx = (p[..., 0] + p[..., 2])[..., None] / 2 + v[..., 0:1] * loc[..., 0:1] * pw
    cy = (p[..., 1] + p[..., 3])[..., None] / 2 + v[..., 1:2] * loc[..., 1:2] * ph
    w = np.exp(v[..., 2:3] * loc[..., 2:3]) * pw
    h = np.exp(v[..., 3:4] * loc[..., 3:4]) * ph
    return np.concatenate([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], axis=-1)


def detect_image(boxes: np.ndarray, conf: np.ndarray, p: dict) -> list[tuple[int, int, float]]:
    """``(class, prior, score)`` detections of one image: ``boxes [P, L, 4]``, ``conf [P, C]``."""
    found: list[tuple[int, int, float]] = []
    for c in range(conf.shape[1]):
        if c == p["background"]:
            continue
        cand = np.flatnonzero(conf[:, c] > p["conf_thr"])
        order = cand[descending(conf[cand, c])]
        if p["top_k"] >= 0:
            order = order[:p["top_k"]]
        cls_boxes = boxes[:, 0 if p["share"] else c]
        kept = greedy_nms(cls_boxes, order, p["nms_thr"], eta=p["eta"])
        found += [(c, int(i), float(conf[i, c])) for i in kept]
    if len(found) > p["keep"]:
        top = descending(np.array([f[2] for f in found]))[:p["keep"]]
        found = [found[i] for i in top]
        found.sort(key=lambda f: f[0])   # stable: within a class, scores stay descending
    return found


@register("SsdDetectionOutput")
class SsdDetectionOutput(Kernel):
    """Decode SSD boxes, per-class adaptive NMS, keep top k; zero-padded fixed-size outputs."""

    def compute(self, ctx: KernelContext, *inputs: np.ndarray) -> tuple[np.ndarray, ...]:
        (l_arr, lmn_arr, lmx_arr, c_arr, cmn_arr, cmx_arr, nc_arr, share_arr, bg_arr, nt_arr, tk_arr, eta_arr,
         code_arr, prior_arr, keep_arr, venc_arr, ct_arr) = inputs
        lmn, lmx = ctx.sane_range(lmn_arr, lmx_arr, "location")
        cmn, cmx = ctx.sane_range(cmn_arr, cmx_arr, "confidence")
        loc_q = u8_codes(ctx, l_arr, "location")
        conf_q = u8_codes(ctx, c_arr, "confidence")
        num_classes = int_in(ctx, nc_arr, "number of classes", 1)
        p = {"share": int_param(ctx, share_arr, "share location") != 0,
             "background": int_in(ctx, bg_arr, "background label id", -1, num_classes - 1),
             "nms_thr": finite_scalar(ctx, nt_arr, "nms threshold"),
             "top_k": int_in(ctx, tk_arr, "nms top k", -1),
             "eta": finite_scalar(ctx, eta_arr, "nms eta"),
             "keep": int_in(ctx, keep_arr, "keep top k", 1),
             "conf_thr": finite_scalar(ctx, ct_arr, "confidence threshold")}
        code = int_in(ctx, code_arr, "code type", CORNER, CORNER_SIZE)
        encoded = int_param(ctx, venc_arr, "variance encoded in target") != 0
        if not 0 < p["eta"] <= 1:
            raise ctx.fail(f"nms eta is {p['eta']}, it must be in (0, 1]")
        batches = loc_q.shape[0] if loc_q.ndim else 1
        if conf_q.size % (batches * num_classes):
            raise ctx.fail(f"confidence holds {conf_q.size} values: not {batches} images x priors x "
                           f"{num_classes} classes")
        priors = conf_q.size // (batches * num_classes)
        n_loc = 1 if p["share"] else num_classes
        if loc_q.size != batches * priors * n_loc * 4:
            raise ctx.fail(f"location holds {loc_q.size} values, expected {batches} x {priors} priors x "
                           f"{n_loc} x 4")
        prior = float_data(ctx, prior_arr, "prior data").reshape(-1)
        if prior.size != 8 * priors and not (encoded and prior.size == 4 * priors):
            raise ctx.fail(f"prior data holds {prior.size} values, expected {8 * priors} "
                           f"({priors} prior boxes then their variances)")
        var = np.ones((priors, 4)) if encoded else prior[4 * priors:].reshape(priors, 4)
        loc = dequantize_u8(loc_q, lmn, lmx).reshape(batches, priors, n_loc, 4)
        conf = dequantize_u8(conf_q, cmn, cmx).reshape(batches, priors, num_classes)
        conf_codes = conf_q.reshape(batches, priors, num_classes)
        slots = batches * p["keep"]
        out_i = np.zeros(slots, dtype=np.int32)
        out_c = np.zeros(slots, dtype=np.int32)
        out_q = np.zeros(slots, dtype=np.uint8)
        out_xy = np.zeros((slots, 4))
        pos = 0
        for n in range(batches):
            boxes = decode(loc[n], prior[:4 * priors].reshape(priors, 4), var, code)
            for c, i, _score in detect_image(boxes, conf[n], p):
                out_i[pos], out_c[pos], out_q[pos] = n, c, conf_codes[n, i, c]
                out_xy[pos] = boxes[i, 0 if p["share"] else c]
                pos += 1
        f32 = out_xy.astype(np.float32)

        def row(a: np.ndarray) -> np.ndarray:
            return np.ascontiguousarray(a).reshape(1, 1, 1, slots)
        return (row(out_i), row(out_c), row(out_q), *range_out(cmn, cmx),
                row(f32[:, 0]), row(f32[:, 1]), row(f32[:, 2]), row(f32[:, 3]))
