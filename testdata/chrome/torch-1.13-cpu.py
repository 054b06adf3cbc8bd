import torch, torch.nn as nn
from torch.profiler import profile, ProfilerActivity, schedule, record_function
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
x = torch.randn(32, 64); y = torch.randint(0, 10, (32,))
def step():
    with record_function("forward"):
        out = model(x)
        loss = nn.functional.cross_entropy(out, y)
    with record_function("backward"):
        loss.backward()
    with record_function("optimizer"):
        opt.step(); opt.zero_grad()
step()
with profile(activities=[ProfilerActivity.CPU], profile_memory=True, record_shapes=True,
             schedule=schedule(wait=0, warmup=1, active=2), on_trace_ready=lambda p: p.export_chrome_trace("trace.json")) as prof:
    for _ in range(3):
        step(); prof.step()
