# Cost of the side attack's PGD in float64 and float32 (bench/RESULTS.md, session 11):
# 40 signed-gradient steps on 32,000 points of a 5-50x6-5 random ReLU net, one thread.
#   /usr/bin/python3 bench/acasxu_diag/pgd_float32_cost.py
import torch, time
torch.set_num_threads(1)
def run(dtype, n=32000, steps=40):
    torch.manual_seed(0)
    W=[torch.randn(50,5,dtype=dtype)]+[torch.randn(50,50,dtype=dtype) for _ in range(5)]+[torch.randn(5,50,dtype=dtype)]
    b=[torch.randn(w.shape[0],dtype=dtype) for w in W]
    c=torch.randn(4,5,dtype=dtype); rhs=torch.zeros(4,dtype=dtype)
    x=torch.rand(n,5,dtype=dtype)
    t=time.time()
    for s in range(steps):
        xv=x.detach().requires_grad_(True)
        h=xv
        for k in range(6): h=torch.relu(h@W[k].t()+b[k])
        y=h@W[6].t()+b[6]
        v=(y@c.t()-rhs).max(1)[0]
        g,=torch.autograd.grad(v.sum(),xv)
        with torch.no_grad(): x=(xv-0.01*g.sign()).clamp(0,1)
    return time.time()-t
for d in [torch.float64, torch.float32, torch.float64, torch.float32]: print(d, round(run(d),3))
