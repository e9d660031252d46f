"""The log doctor's texts in Chinese, parallel to its English ones (``fampnb.diagnose``'s advice,
caveats and framework hints, the same keys and list lengths: tested), plus the templates of its
verdict reasons.  ``fampnb.localize`` puts them into a ``Diagnosis`` when Chinese is chosen; the
English texts stay where the doctor writes them (one source), and ``--json`` never changes.
Terms: 尺度 (scale), 缩放器 (scaler), 上溢/下溢, 最大/最小规格数, 次正规数, 判据链, 回退 (backoff)."""

from __future__ import annotations

ADVICE: dict[str, list[str]] = {
    "overflow": [
        "先降学习率（例如降到 1/2–1/10）、收紧梯度裁剪（例如 max_norm 1.0）：overflow 行还在更新，"
        "说明梯度对当前尺度来说太大。",
        "盯住尺度：砍到 256 以下还在减半（连续减半八次），说明梯度长期压不住当前尺度；等缩放器没用，"
        "该动的是梯度和数据。",
        "把梯度绝对值上限 G 打出来，核对 G x 尺度：> 65504 坐实上溢（降学习率、收紧梯度裁剪）；"
        "< 6.1e-05 是下溢：减批次大小或换 bf16。",
        "如果模型是 bf16 预训练的（T5、GLM、Mistral、LLaMA），用 bf16（或 fp32）代替 fp16 训练："
        "它的激活装不进 fp16 的范围。",
        "最后才动缩放器（调低 min_loss_scale 或用静态 loss scale）：那只是掩盖症状，不能消除病因。",
    ],
    "data": [
        "先查数据：标签和输入里有没有 inf/NaN（对一个批次做 torch.isfinite）、空的或损坏的样本，"
        "以及归一化参数（标准差为零、均值和标准差写反）。",
        "用 fp32（或 bf16）跑第一个批次：仍然是 NaN，病因就是数据或模型，而不是 fp16 的范围；"
        "只有在 bf16/fp32 下才是有限值，那就是范围问题。",
        "先别调缩放器和学习率：数据型 NaN 不会因为尺度减半而好转。",
    ],
    "no-scaler": [
        "这里没有动态缩放器在工作（bf16、fp32 或静态尺度），所以没有什么会跳过非有限的一步："
        "检查第一个 NaN 步的批次，看标签或输入里有没有 inf/NaN。",
        "降学习率、收紧梯度裁剪；找一找 NaN 之前 loss 或梯度范数有没有尖峰。",
        "让训练跳过非有限的步（在 optimizer.step 之前检查梯度范数是否有限），并逐步记录原始的 loss 和"
        "梯度范数，让下一个 NaN 在它开始的地方就能看见。",
    ],
    "healthy": [
        "没有要动的开关：缩放器在正常工作。留意尺度那一行：麻烦始于它在启动之后还一直减半、"
        "砍到 256 以下且不再回升。",
    ],
    "unknown": [
        "多记录一些再判断：每一步的 loss、梯度范数、尺度（或框架的 overflow 行），并说明这次训练的"
        "精度（fp16/bf16/fp32）。",
        "然后套用判据链：overflow 行还在更新 -> 降学习率、收紧梯度裁剪；第 0 步就 NaN 且没有 "
        "overflow 行 -> 查数据。",
    ],
}

CAVEATS: dict[str, str] = {
    "bf16-pretrained": (
        "fp16 下第 0 步的 NaN 不一定是数据问题：bf16 预训练的模型（T5、GLM、Mistral、LLaMA）在 fp16 "
        "里前向激活就会上溢，损失缩放修不好。判断方法：用 bf16 或 fp32 跑一个批次；那里是有限值、"
        "fp16 下是 NaN，就是范围问题（用 bf16 训练）；哪里都是 NaN，就是数据问题。"),
    "calibration": (
        "启动时的回退是校准：缩放器从高处起步（2^16、2^32、2^15），一路减半直到梯度装得下。"
        "只要之后没有持续的 NaN，这就是正常的。"),
    "hf-filter": (
        "HF Trainer 会把非有限的单步 loss 替换成滑动平均（logging_nan_inf_filter，默认开启），所以打印出的"
        "有限 loss 可能藏着 NaN；设 logging_nan_inf_filter=False。grad_norm 不受过滤：fp16 下那里的 "
        "nan/inf 是被跳过的一步。"),
    "megatron": (
        "Megatron 会藏起 NaN：loss 为 NaN 时，迭代行里的 loss 字段直接消失而不是打印 nan，"
        "nan-iterations 计数也可能一直是 0（bf16）。loss 缺失且跳过计数不为零，是被跳过的步；"
        "跳过计数为零，就是 NaN。"),
    "silent": (
        "这个框架的缩放器不打印日志（torch GradScaler、Accelerate、Lightning、Keras）：它跳过一步时"
        "什么都不说，所以没有 overflow 行什么也证明不了；只剩间接痕迹（grad_norm nan、打印出的尺度在下跌、"
        "lr_scheduler 的警告）。"),
    "below-one": (
        "尺度跌破 1 还在减半：到了这一步，梯度在任何尺度下都不是有限值，所以 inf/NaN 来自前向传播、"
        "数据或程序错误，而不是 fp16 的梯度范围。"),
    "fairseq-avg": (
        "fairseq 的 loss_scale 指标是一个区间内的平均值、为显示而取整：1399 或 0 这样的值是假象"
        "（0 表示低于 0.5），并不是真实的尺度。"),
    "grad-nan-skipped": (
        "grad_norm 为 nan/inf 而 loss 有限且在下降，说明缩放器跳过了这些步：在 fp16 下是正常的。"),
    "transient-nan": (
        "单独一条 NaN 记录、之后又是有限值，是在被跳过的一步上打印的；只有持续的 NaN 才算失败。"),
    "precision-unknown": (
        "日志没有说明精度。bf16 和 fp32 从不打印回退，所以在那里单凭时间线分不开数据问题和无缩放器；"
        "知道精度的话请给出（--precision）。"),
    "no-scaler-silent": (
        "日志里看不到缩放器。如果训练用的是 fp16 加一个不打印日志的缩放器（GradScaler、Accelerate、"
        "Lightning、Keras），这个 NaN 可能是隐藏的上溢：把尺度记录下来。"),
    "frozen-after-nan": (
        "NaN 之后的 {n} 条记录里 loss 每一条都是 {value}，所有数位都一样：权重已经不再变化（NaN 进了权重，"
        "或者每一步都被跳过），所以这个 NaN 按持续的 NaN 来读，而不是恢复。"),
    "softmax-floor": (
        "87.3365 的 loss 就是 -ln(FLT_MIN)：Caffe 的 softmax loss 把正确类别的概率截在 float32 "
        "最小的正规数上，所以当这个概率变成 0（网络输出已经成了 inf 或 NaN）时就打印这个值。"
        "它按 NaN 的 loss 来读。"),
    "multi-rank": (
        "同一次回退出现在好几个 rank 或缩放器的日志里：每行只计一次，但连续回退的深度按不同的尺度值计算。"),
    "applied-nonfinite": (
        "非有限的梯度范数之后 loss 变成恰好 0.0：这次非有限的更新进了权重，而动态的 fp16 缩放器本会"
        "跳过它（bf16 的典型痕迹）。"),
    "inferred-fp16": (
        "日志没有说明精度；推断为 fp16：一条梯度范数非有限的记录让一直在变的学习率停在原处，"
        "说明这一步被跳过了，而只有 fp16 的缩放器会这样做。如果不对，请用 --precision 给出精度。"),
    "truncated": (
        "文件被截断了（一个提前结束的压缩日志）：判定依据截断之前的行；之后发生了什么无从得知。"),
    "ranks-disagree": (
        "各 rank 不一致：rank {bad} 出现 NaN loss，rank {good} 没有；判定读的是 rank {read} 自己的记录"
        "（只有一个 rank 出 NaN，问题指向它的数据分片或它的设备）。"),
    "ranks-apart": (
        "各 rank 打印的 loss 大小不同（rank {ranks}，各打各的）：混在一起读像是 loss 爆炸了，但没有哪个 "
        "rank 自己的记录是这样；判定读的是 rank {read} 自己的记录。"),
    "out-of-memory": (
        "进程显存/内存不足（第 {line} 行）：在这里停下的训练是因为内存，而不是因为 NaN；请减小 batch "
        "size 或使用梯度检查点，判定依据它之前的记录。"),
    "misuse": (
        "日志里有 API 误用错误（例如 fp16 参数配 GradScaler、unscale_/step 调用了两次、用融合优化器"
        "做梯度裁剪）：先修正调用顺序（unscale_ 在 clip_grad_norm_ 之前，每次迭代一次 step() 和一次 "
        "update()）。"),
}

FRAMEWORK_HINTS: dict[str, str] = {
    "deepspeed": "DeepSpeed：配置里的 fp16.min_loss_scale / fp16.loss_scale（静态）/ bf16.enabled；"
                 "'Current loss scale already at minimum' 异常就是结局。",
    "fairseq": "fairseq：--min-loss-scale、--fp16-scale-tolerance、--bf16；FloatingPointError "
               "'Minimum loss scale reached' 就是结局。",
    "megatron": "Megatron：--bf16，或静态的 --loss-scale；--min-loss-scale；"
                "--check-for-nan-in-loss-and-grad。",
    "apex": "apex amp：amp.initialize 里的 min_loss_scale（默认没有下限）；apex amp 已弃用，"
            "继任者是 torch.amp。",
}

#: verdict reasons: (English template, Chinese template); ``{name}`` is a variable part (a
#: number, a log excerpt), matched in the English and put into the Chinese as it is
REASONS: list[tuple[str, str]] = [
    # whole reasons (tried first; a reason that matches none is read clause by clause, "; ")
    ("a non-finite gradient reached the weights at {where}: the loss then reads "
     "exactly 0.0 (line {zero}); no dynamic scaler skipped the step (the bf16 trace)",
     "非有限的梯度在{where}进了权重：之后 loss 恰好是 0.0（第 {zero} 行）；"
     "没有动态缩放器跳过这一步（bf16 的典型痕迹）"),
    ("the excerpt ends on {n} record(s) with a non-finite grad norm whose loss jumps ({a} -> {b}): "
     "a step that an fp16 scaler skipped, or the start of a collapse (bf16 has no scaler to skip "
     "it); nothing after it shows which",
     "片段结束在 {n} 条梯度范数非有限的记录上，其 loss 跳变（{a} -> {b}）：可能是 fp16 缩放器跳过的"
     "一步，也可能是崩溃的开始（bf16 没有缩放器来跳过它）；之后没有任何内容能说明是哪一种"),
    ("every loss record ({n}) has a non-finite grad norm: a step that an fp16 scaler skipped (at "
     "start-up it is calibrating) or a NaN gradient that bf16 or fp32 applies; no record with a "
     "finite grad norm shows training go on, and the log states no precision",
     "每一条 loss 记录（{n} 条）的梯度范数都非有限：可能是 fp16 缩放器跳过的一步（启动时它在校准），"
     "也可能是 bf16 或 fp32 照样应用了的 NaN 梯度；没有一条梯度范数有限的记录能说明训练在继续，"
     "日志也没有说明精度"),
    ("an error says the gradients are not finite, with no loss scaler to absorb them (fairseq "
     "bf16/fp32: 'gradients are Nan/Inf'; DyNet: 'Magnitude of gradient is bad: -nan') at the start",
     "一个错误说梯度非有限，而没有损失缩放器来吸收它们（fairseq bf16/fp32：'gradients are Nan/Inf'；"
     "DyNet：'Magnitude of gradient is bad: -nan'），发生在训练开始时"),
    ("an error says the gradients are not finite, with no loss scaler to absorb them (fairseq "
     "bf16/fp32: 'gradients are Nan/Inf'; DyNet: 'Magnitude of gradient is bad: -nan') mid-run",
     "一个错误说梯度非有限，而没有损失缩放器来吸收它们（fairseq bf16/fp32：'gradients are Nan/Inf'；"
     "DyNet：'Magnitude of gradient is bad: -nan'），发生在训练中途"),
    ("an error says the gradients are not finite, but no record or start of training before it "
     "says how far the run had got",
     "一个错误说梯度非有限，但它之前没有任何记录或训练开始的迹象能说明训练进行到了哪里"),
    ("the training loss reads NaN from {where} while the evaluation loss beside it stays finite "
     "on every record: NaN weights would make it NaN too, so the NaN is in the printed training "
     "loss, not in the model",
     "训练 loss 从{where}起读作 NaN，而旁边的评估 loss 在每条记录里都保持有限：若权重已是 NaN，"
     "评估也会是 NaN，所以 NaN 出在打印出来的训练 loss 上，而不在模型里"),
    ("NaN from the first record ({where}), before the first backoff, and no finite loss after it: "
     "the scaler then halves at every scale, which no scale fixes",
     "第一条记录（{where}）就是 NaN，早于第一次回退，之后也没有有限的 loss：缩放器随后在每个尺度上都减半，"
     "而任何尺度都修不好它"),
    ("overflow: {why}", "上溢：{why}"),
    ("start-up halving went below 256 and never recovered ({a} -> {b} in {n} backoff records)",
     "启动时的减半砍到 256 以下，再未回升（{n} 条回退记录，{a} -> {b}）"),
    ("backoffs after a healthy stretch took the scale below 256 ({a} -> {b} in {n} backoff records)",
     "一段健康的训练之后，回退把尺度砍到 256 以下（{n} 条回退记录，{a} -> {b}）"),
    ("consecutive backoffs after a healthy stretch, no recovery ({a} -> {b} in {n} backoff records)",
     "一段健康的训练之后连续回退，不再回升（{n} 条回退记录，{a} -> {b}）"),
    ("the scale kept halving below 1 ({a} -> {b} in {n} backoff records)",
     "尺度跌破 1 还在减半（{n} 条回退记录，{a} -> {b}）"),
    ("a lasting NaN (line {line}) follows the backoffs ({a} -> {b} in {n} backoff records)",
     "回退之后出现持续的 NaN（第 {line} 行；{n} 条回退记录，{a} -> {b}）"),
    ("the scaler is stuck at its floor: {n} overflow records (lines {first}-{last}) with the scale "
     "already at {scale}, so it cannot halve any further and every step is skipped",
     "缩放器卡在下限：{n} 条 overflow 记录（第 {first}-{last} 行）出现时尺度已经是 {scale}，"
     "无法再减半，每一步都被跳过"),
    ("the scaler is stuck at its floor: 1 overflow record (line {line}) with the scale already "
     "at {scale}, so it cannot halve any further and every step is skipped",
     "缩放器卡在下限：1 条 overflow 记录（第 {line} 行）出现时尺度已经是 {scale}，无法再减半，"
     "每一步都被跳过"),
    ("{n} overflow records in a row (lines {first}-{last}) at an unchanging loss scale of "
     "{scale}: the scale never falls (a static scale), so the steps keep overflowing",
     "连续 {n} 条 overflow 记录（第 {first}-{last} 行），尺度始终是 {scale}：尺度从不下降（静态尺度），"
     "所以每一步都在上溢"),
    ("the framework applies the overflowed steps instead of skipping them (overflow_still_update)",
     "框架没有跳过上溢的步，而是照样更新了权重（overflow_still_update）"),
    ("{value} (printed as an integer: a scale below 1)", "{value}（按整数打印：尺度低于 1）"),
    ("{value} (halved to nothing)", "{value}（已被减半到 0）"),
    ("the scale sits at its floor and the steps keep being skipped", "尺度停在下限，步骤一直被跳过"),
    ("the scaler hit its minimum and the run stopped: {text}", "缩放器到达下限，训练终止：{text}"),
    ("the steps kept overflowing and the run stopped on it: {text}",
     "每一步都在上溢，训练因此终止：{text}"),
    ("an error ends the log: {text}", "日志以一个错误结束：{text}"),
    ("the log says the input holds NaN at {where}: {text}", "日志说在{where}处输入里有 NaN：{text}"),
    ("an API misuse error, not a NaN diagnosis: {text}", "这是 API 误用错误，不是 NaN 诊断：{text}"),
    ("the printed loss scale is {scale}, below 1: a silent scaler has halved it on every "
     "overflowing step", "打印出的尺度是 {scale}，低于 1：一个不打印日志的缩放器在每个上溢的步上都把它减半了"),
    ("{n} consecutive records with a non-finite grad norm (steps the silent scaler skipped, from "
     "line {line}) run straight into a loss that never recovers",
     "{n} 条连续的梯度范数非有限的记录（不打印日志的缩放器跳过的步，从第 {line} 行起）之后，"
     "loss 再也没有恢复"),
    ("the loss is exactly 0 on every finite record, from the first one at {where} (the last {m} in "
     "a row): the run is fp16 and shows no loss scaler, so the loss and gradients underflow to 0 "
     "below fp16's smallest subnormal; add dynamic loss scaling (or train in bf16)",
     "每一条有限的记录里 loss 都恰好是 0，从{where}的第一条起（最后 {m} 条连续为 0）：这是 fp16 训练且"
     "看不到 loss 缩放器，loss 和梯度低于 fp16 最小的次正规数而下溢成 0；加上动态 loss 缩放（或改用 "
     "bf16 训练）"),
    ("the loss is exactly 0 on every finite record, from the first one at {where} (the last {m} in "
     "a row): not healthy training but an underflow or a degenerate run. Check the precision (fp16 "
     "without loss scaling flushes small losses and gradients to 0) and the labels and loss "
     "function (empty or masked-out targets, a wrong reduction give an identical 0)",
     "每一条有限的记录里 loss 都恰好是 0，从{where}的第一条起（最后 {m} 条连续为 0）：这不是健康的训练，"
     "而是下溢或退化的训练。检查精度（没有 loss 缩放的 fp16 会把小的 loss 和梯度冲成 0），以及标签和"
     "损失函数（空的或被全部遮掉的目标、错误的归约都会给出恒为 0）"),
    ("the validation loss is NaN on {n} record(s) beside {m} finite training record(s), from "
     "{where}, while the training loss stays finite: the NaN comes from the evaluation, not from "
     "training. Check the validation "
     "data (an empty or broken split gives NaN) and whether the evaluation runs in a lower "
     "precision than training",
     "验证集的 loss 有 {n} 条记录是 NaN（旁边有 {m} 条有限的训练记录；从{where}起），而训练的 loss 一直是有限值：NaN "
     "来自评估，而不是训练。检查验证数据（空的或损坏的划分会给出 NaN），以及评估是否用了比训练更低的精度"),
    ("a mid-run backoff ({a} -> {b}, line {line}) that may be isolated or the start of a cascade: "
     "the excerpt ends right after it, so nothing shows that the scale held",
     "训练中途的一次回退（{a} -> {b}，第 {line} 行），可能是孤立的，也可能是连锁回退的开始："
     "片段在它之后立即结束，看不出尺度是否稳住"),
    ("NaN from the start of the excerpt (step {step}, line {line}), but the scaler's overflow "
     "messages go with it (line {ovf}: {said}): the steps are being skipped, so this is no plain "
     "data NaN. A cascade of overflows that began before the excerpt and a NaN from the forward "
     "pass (a bad batch, or fp16 activations overflowing, which no loss scale fixes) look the same "
     "here; the lines before it, with the loss scale, would tell",
     "片段一开始就是 NaN（第 {step} 步，第 {line} 行），但缩放器的上溢消息与它同时出现（第 {ovf} 行："
     "{said}）：这些步正在被跳过，所以这不是单纯的数据 NaN。在片段之前就开始的连锁上溢，与前向传播产生的 "
     "NaN（坏批次，或 fp16 激活值上溢——任何 loss 尺度都修不好）在这里看起来一样；它之前带 loss 尺度的"
     "那些行才能分辨"),
    ("the grad norm reads {norm} on each of them, one value to the last digit: no gradient of "
     "changing batches",
     "这些记录的梯度范数都是 {norm}，每一位都相同：这不是随批次变化的梯度"),
    ("the loss became exactly 0 at {where}, after {n} non-zero record(s), and stays 0 on the last "
     "{m} records: the run is fp16 and shows no loss scaler, so the loss and gradients underflow "
     "to 0 below fp16's smallest subnormal; add dynamic loss scaling (or train in bf16)",
     "loss 在{where}变成恰好 0（此前有 {n} 条非零记录），最后 {m} 条记录都保持 0：这是 fp16 训练且"
     "看不到 loss 缩放器，loss 和梯度低于 fp16 最小的次正规数而下溢成 0；加上动态 loss 缩放（或改用 "
     "bf16 训练）"),
    ("the loss became exactly 0 at {where}, after {n} non-zero record(s), and stays 0 on the last "
     "{m} records: not healthy training but an underflow or a degenerate run. Check the precision "
     "(fp16 without loss scaling flushes small losses and gradients to 0) and the labels and loss "
     "function (empty or masked-out targets, a wrong reduction give an identical 0)",
     "loss 在{where}变成恰好 0（此前有 {n} 条非零记录），最后 {m} 条记录都保持 0：这不是健康的训练，"
     "而是下溢或退化的训练。检查精度（没有 loss 缩放的 fp16 会把小的 loss 和梯度冲成 0），以及标签和"
     "损失函数（空的或被全部遮掉的目标、错误的归约都会给出恒为 0）"),
    ("a mid-run backoff ({a} -> {b}, line {line}) that may be isolated or the start of a cascade: "
     "the next record jumps ({jump}) and the excerpt ends, so nothing shows that the scale held",
     "训练中途的一次回退（{a} -> {b}，第 {line} 行），可能是孤立的，也可能是连锁回退的开始："
     "下一条记录跳变（{jump}），片段随即结束，看不出尺度是否稳住"),
    ("NaN appears mid-run at {where} and no dynamic scaler is at work ({why})",
     "训练中途{where}出现 NaN，且没有动态缩放器在工作（{why}）"),
    ("NaN appears mid-run at {where} although a dynamic scaler is at work and no "
     "overflow record precedes it: a bad batch (data) or a hidden overflow",
     "训练中途{where}出现 NaN，虽然有动态缩放器在工作，但之前没有任何 overflow 记录："
     "可能是一个坏批次（数据），也可能是没有打印出来的上溢"),
    ("the loss scale is a constant 1.0 with no skipped steps", "尺度恒为 1.0，没有跳过的步"),
    ("the run is bf16", "这是 bf16 训练"),
    ("NaN appears mid-run at {where} with no loss scaler visible in the log",
     "训练中途{where}出现 NaN，日志里看不到缩放器"),
    ("NaN appears at {where}, not at the start of training, and the log neither states the "
     "precision nor can show a scaler (this framework's scaler is silent, or no record precedes "
     "the NaN)",
     "{where}出现 NaN，不在训练开头；日志既没有说明精度，也显示不出缩放器（这个框架的缩放器不打印"
     "日志，或者 NaN 之前没有任何记录）"),
    ("step {step} (line {line})", "第 {step} 步（第 {line} 行）"),
    ("line {line}", "第 {line} 行"),
    ("NaN from the start of the log ({where}) with no overflow record before it",
     "日志一开始就是 NaN（{where}），之前没有任何 overflow 记录"),
    ("the loss explodes from at most {base} to {loss} at {where} and stays up (the last record "
     "reads {last}): a divergence, read as the onset of the NaN it ends in",
     "loss 在{where}从至多 {base} 暴涨到 {loss}，之后一直没有回落（最后一条记录是 {last}）：这是发散，"
     "按它最终导致的 NaN 的起点来判断"),
    ("no training records recognised (loss, loss scale, overflow lines)",
     "没有识别出任何训练记录（loss、尺度、overflow 行）"),
    ("no NaN, no failure signature", "没有 NaN，也没有失败的迹象"),
    ("no training records recognised: {n} event(s) read, {losses} finite loss record(s), roles "
     "seen: {roles}", "没有识别出任何训练记录：读到 {n} 个事件、{losses} 条有限的 loss 记录，见到的角色：{roles}"),
    ("the only NaN is an evaluation's loss ({n} record(s), from {where}) and no training record "
     "is in the log: whether training itself stayed finite cannot be read; the training loss per "
     "step would tell",
     "唯一的 NaN 是评估的 loss（{n} 条记录，从{where}起），日志里没有任何训练记录：看不出训练本身是否一直"
     "是有限值；每一步的训练 loss 才能说明"),
    ("no NaN, but the loss reaches {peak}: no training that works prints a loss that large, so "
     "the run had diverged before or within the window; when it began, and whether it ends in a "
     "NaN, is not in the lines",
     "没有 NaN，但 loss 达到了 {peak}：正常的训练不会打印这么大的 loss，所以这次训练在这段日志之前或之中"
     "已经发散；它从何时开始、最后是否变成 NaN，日志里看不出来"),
    ("no NaN, but the perplexity reaches {peak}: more than any vocabulary's size, worse than a "
     "uniform guess, so the model had diverged before or within the window; when it began, and "
     "whether it ends in a NaN, is not in the lines",
     "没有 NaN，但困惑度达到了 {peak}：比任何词表都大，比均匀瞎猜还差，所以模型在这段日志之前或之中已经发散；"
     "它从何时开始、最后是否变成 NaN，日志里看不出来"),
    ("no loss in the log, but {n} record(s) of other values at their steps or epochs, every one "
     "finite, and no NaN, overflow or error line",
     "日志里没有 loss，但有 {n} 条带步数或轮数的其他数值记录，全都是有限值，也没有 NaN、overflow 或报错行"),
    ("no loss and no training step in the log, but {n} finite measure(s) of the run (an "
     "evaluation's accuracy, F1, PSNR and the like), and no NaN, overflow or error line: healthy "
     "where it shows",
     "日志里没有 loss，也没有训练步数，但有 {n} 个有限的运行指标（评估的准确率、F1、PSNR 之类），也没有 NaN、"
     "overflow 或报错行：就日志所示而言是健康的"),
    ("none", "无"),
    ("to decide, the log would need to show the loss per step (with its step), the loss scale or "
     "the framework's overflow lines, and the precision",
     "要做判断，日志需要给出每一步的 loss（带步数）、尺度或框架的 overflow 行，以及精度"),
    ("NaN appears mid-run at {where} with the printed loss scale at {scale}, "
     "below 1: the scaler has halved it away on overflowing steps",
     "训练中途{where}出现 NaN，打印出的尺度是 {scale}、低于 1：缩放器在上溢的步上"
     "把它一路减半没了"),
    # clauses of composite reasons
    ("the loss scale holds at {scale}", "尺度稳定在 {scale}"),
    ("the scale holds at {scale}", "尺度稳定在 {scale}"),
    ("{n} backoff record(s), start-up calibration or isolated",
     "{n} 条回退记录，属于启动校准或孤立的回退"),
    ("{n} record(s) with a non-finite grad norm and a finite loss are skipped steps",
     "{n} 条梯度范数非有限而 loss 有限的记录是被跳过的步"),
    ("{n} finite loss record(s), no lasting NaN", "{n} 条有限的 loss 记录，没有持续的 NaN"),
    ("the learning rate is still exactly 0.0 on record {n} (line {line}): the Trainer steps its "
     "scheduler only after an optimizer step that ran, so the fp16 loss scaler (silent) has "
     "skipped every step from the first: the gradients are non-finite at every scale it tried. "
     "Check the data, and whether the model was pretrained in bf16",
     "到第 {n} 条记录（第 {line} 行）学习率仍然正好是 0.0：Trainer 只在优化器真正执行了一步之后才推进"
     "调度器，所以（不打印日志的）fp16 缩放器从第一步起就跳过了每一步：它试过的每个尺度下梯度都是非有限的。"
     "先查数据，再看模型是不是用 bf16 预训练的"),
    ("{n} step(s) skipped for a non-finite gradient and no loss record: an fp16 overflow that the "
     "scaler skips and a NaN from a bad batch look the same here; the loss per step, the loss "
     "scale and the precision would tell",
     "{n} 步因梯度非有限被跳过，却没有一条 loss 记录：缩放器跳过的 fp16 上溢和坏批次带来的 NaN 在这里"
     "看起来一样；每一步的 loss、尺度和精度才能分辨"),
    ("the run stops with an exception after its last record (the traceback at line {line}): its "
     "cause is not in the records before it, and the exception's own line would tell whether it "
     "is a NaN or overflow check (a scale of 0 dividing, a non-finite check) or something else",
     "训练在最后一条记录之后因异常停止（第 {line} 行的 traceback）：原因不在之前的记录里；异常本身那一行"
     "才能说明它是 NaN 或上溢检查（尺度为 0 做除数、非有限值检查）还是别的问题"),
    ("{n} finite evaluation record(s) and no training record: the model stays finite where the "
     "log shows it", "{n} 条有限的评估记录，没有训练记录：在日志显示的地方模型一直是有限值"),
    ("the missing loss field goes with a non-zero skipped-iterations counter: skipped start-up "
     "steps, not NaN", "缺失的 loss 字段伴随着非零的跳过迭代计数：是启动时被跳过的步，不是 NaN"),
    ("the scale is already {scale} at the first record", "第一条记录时尺度已经是 {scale}"),
    ("the lr_scheduler-before-optimizer warning only means the first fp16 step was skipped",
     "lr_scheduler 早于 optimizer 调用的警告只说明第一个 fp16 步被跳过了"),
    ("the first record already reads loss 0.0 with a non-finite grad norm, no finite loss before it",
     "第一条记录的 loss 已经是 0.0、梯度范数非有限，之前没有任何有限的 loss"),
]
