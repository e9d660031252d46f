"""中文文本（``FAMPNB_LANG=zh``、``--lang zh`` 或 ``fampnb.i18n.set_language("zh")``）。
术语取自源文章：尺度、上溢、下溢、最大规格数、最小规格数、判据链、缩放器；subnormal 译作次正规数。"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # -- python -m fampnb seed (fampnb.seed.render) ------------------------------------------
    "seed.exp1.title": "实验一：fp16 区间模型（最大规格数 {max}，最小规格数 {min_normal}）",
    "seed.col.case": "场景",
    "seed.col.grad_abs_max": "梯度绝对值上限",
    "seed.col.scale": "尺度",
    "seed.col.scaled": "缩放值",
    "seed.col.verdict": "判定",
    "seed.exp1.marked": "标记行统计：OVERFLOW {overflow}  UNDERFLOW {underflow}  合计 {total}/{n}",
    "seed.exp2.title": ("实验二：尺度衰减，起始尺度 {start}，规则：每遇 overflow 减半、从不增长，"
                        "固定步数 {steps}（fp16 上限 {max}）"),
    "seed.col.row": "行",
    "seed.col.grad_max": "梯度上限",
    "seed.col.next": "下一步",
    "seed.exp2.check": "第 {row} 行检查：实算 {got}，期望 {expected}，判定 {result}",
    "seed.exp2.sequence": "尺度序列：{sequence}",
}
