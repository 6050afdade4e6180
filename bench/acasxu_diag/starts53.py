# How many PGD restarts find 5_3 prop_2's counterexample (session 8): tessera's schedule (signed
# steps from 0.25 of the width decaying to 1/100, 40 steps) from uniform starts vs starts on the
# box's faces (each coordinate at its lower bound, its upper bound, or uniform: 1/4, 1/4, 1/2).
# /usr/bin/python3 starts53.py N SEEDS
import sys, torch
from acas import *
torch.set_num_threads(1)
fwd,sub,layers=load('5_3'); lo,hi=read_box('prop_2')
def viol(y): return (y[:,1:]-y[:,:1]).max(1).values
def pgd(x,steps=40,step=0.25,last=0.01):
    w=hi-lo; r=last**(1/(steps-1)); eta=step; best=torch.full((x.shape[0],),1e9,dtype=torch.float64)
    for s in range(steps+1):
        x=x.detach().requires_grad_(True); v=viol(fwd(x))
        best=torch.min(best,v.detach())
        if s==steps: break
        g,=torch.autograd.grad(v.sum(),x)
        with torch.no_grad(): x=torch.max(torch.min(x-eta*w*g.sign(),hi),lo)
        eta*=r
    return best
N=int(sys.argv[1]); seeds=int(sys.argv[2])
for kind in ('uniform','faces'):
    found=0; mins=[]
    for sd in range(seeds):
        torch.manual_seed(sd)
        x=lo+(hi-lo)*torch.rand(N,5,dtype=torch.float64)
        if kind=='faces':
            u=torch.rand(N,5,dtype=torch.float64); x=torch.where(u<0.25,lo.expand(N,5),torch.where(u<0.5,hi.expand(N,5),x))
        b=pgd(x); found+=int((b<=0).any()); mins.append(float(b.min()))
    print(kind,'N',N,'found in',found,'of',seeds,'seeds; best values',['%.2e'%m for m in mins],flush=True)
